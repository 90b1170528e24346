import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print job events for scripts: a job's history, then its new events until it ends.",
        discussion: """
            With JOB: its events so far, then new ones as they happen; exits when the job ends, with status 0 if it \
            is done and 1 if it failed or was canceled (as `watch`). Without JOB: every job's new events until \
            Ctrl-C or SIGTERM (status 0). --no-follow prints the history (of JOB, or of every job) and exits 0. \
            Lines: TIME JOB job FROM -> TO[: DETAIL] or TIME JOB segment N FROM -> TO[: DETAIL]; --json prints \
            one object per line with the keys id, job, at, kind (job or segment), segment, from, to, worker, detail.
            """)

    @Argument(help: "A job id, or a unique prefix of one (default: every job).") var job: String?
    @Flag(help: "One JSON object per line (NDJSON).") var json = false
    @Flag(help: "Print the events so far and exit.") var noFollow = false
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let job = job, json = json, following = !noFollow
        let final: JobState?
        do {
            if let job { try JobStore.validateID(job) }
            let url = try database.resolveURL()
            // The store connection stays on the thread that follows the events.
            @Sendable func printEvents(stop: CancellationFlag) throws(StoreError) -> JobState? {
                let store = try JobStore(url: url, migrate: true, reconnectTimeout: 5)
                defer { store.close() }
                return try EventPrinter(store: store, json: json).run(job: job, follow: following, stop: stop)
            }
            if job == nil && following {
                // Following every job ends only on SIGTERM or SIGINT: end cleanly then.
                let service = ThreadService("tessera-events") { stop in _ = try printEvents(stop: stop) }
                try await ServiceGroup(configuration: .process([service], logger: Logger(label: "tessera.events"))).run()
                final = nil
            } else {
                final = try await DedicatedThread.run("tessera-events") { try printEvents(stop: CancellationFlag()) }
            }
        } catch {
            throw Tessera.fail(error as? StoreError ?? StoreError("\(error)"))
        }
        if let final, final != .done { throw ExitCode(1) }
    }
}

/// Prints events as they are appended to `job_events`. The store NOTIFYs on job changes; segment
/// leases do not notify, so a short wait doubles as a poll.
struct EventPrinter {
    let store: JobStore
    let json: Bool
    var pollSeconds = 0.5

    /// Returns the job's final state when it followed one job to its end, else nil.
    func run(job: String?, follow: Bool, stop: CancellationFlag) throws(StoreError) -> JobState? {
        // LISTEN before reading the history, so that nothing between the two is missed.
        if follow { try store.listen() }
        let id = try job.map { prefix throws(StoreError) in try store.job(prefix).id }
        var last: Int64 = id == nil && follow ? try store.latestEventID() : 0
        last = try printEvents(of: id, after: last)
        guard follow else { return nil }
        while !stop.isCancelled {
            if let id {
                // The final transition is written in the same transaction as the state: print through it.
                let state = try store.job(id).state
                if state.isFinal {
                    _ = try printEvents(of: id, after: last)
                    return state
                }
            }
            _ = try store.waitForChanges(timeout: pollSeconds)
            last = try printEvents(of: id, after: last)
        }
        return nil
    }

    /// Prints the events after `last`; returns the newest id printed (or `last`).
    func printEvents(of job: String?, after last: Int64) throws(StoreError) -> Int64 {
        let events = try store.events(job, after: last)
        guard !events.isEmpty else { return last }
        let text = events.map { json ? CanonicalJSON.encode(EventLine($0)) : EventLine($0).text }.joined(separator: "\n") + "\n"
        // Unbuffered, so that a script reading the pipe sees each event as it happens.
        FileHandle.standardOutput.write(Data(text.utf8))
        return events.last?.id ?? last
    }
}

/// One event as scripts see it. Every key is always present (null when it does not apply).
struct EventLine: Encodable {
    var id: Int64
    var job: String
    var at: String
    var kind: String
    var segment: Int?
    var from: String?
    var to: String
    var worker: String?
    var detail: String?

    init(_ event: JobEvent) {
        id = event.id
        job = event.jobID
        at = event.at
        kind = event.segmentIndex == nil ? "job" : "segment"
        segment = event.segmentIndex
        from = event.from
        to = event.to
        detail = event.detail
        worker = event.worker
    }

    enum CodingKeys: String, CodingKey { case id, job, at, kind, segment, from, to, worker, detail }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(job, forKey: .job)
        try c.encode(at, forKey: .at)
        try c.encode(kind, forKey: .kind)
        // encode, not encodeIfPresent: a missing value is written as null.
        try c.encode(segment, forKey: .segment)
        try c.encode(from, forKey: .from)
        try c.encode(to, forKey: .to)
        try c.encode(worker, forKey: .worker)
        try c.encode(detail, forKey: .detail)
    }

    var text: String {
        var s = "\(at) \(job) \(kind)"
        if let segment { s += " \(segment)" }
        s += from.map { " \($0) -> \(to)" } ?? " \(to)"
        if let detail { s += ": \(detail)" }
        return s
    }
}
