import ArgumentParser
import Foundation
import TesseraCluster
import TesseraCore
import TesseraEngine
import TesseraStore

struct Submit: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "submit", 
        abstract: "Queue a transcode job; prints its id alone on stdout.",
        discussion: "JOB=$(tessera submit in.mov -o out.mp4) works: everything else goes to stderr. A coordinator picks the job up.")

    @Argument(help: "The input file, as the coordinator will see its path.") var input: String
    @Option(name: .shortAndLong, help: "The output MP4.") var output: String
    @OptionGroup var encode: EncodeOptions
    @Option(help: "Target segment length in seconds, rounded to whole GOPs (default 8).") var segmentSeconds: Double?
    @Flag(help: "Follow the job and exit with its result.") var wait = false
    @Option(help: "Only the coordinator with this id (its --id) may take the job; others leave it alone.") var coordinator: String?
    @Option(help: "0 to 100: jobs of higher priority are planned and encoded first (default 50, or the settings file's 'priority').")
    var priority: Int?
    @Option(help: ArgumentHelp("Share of this job's segments encoded again by another worker key and compared: 0 off, 1 every segment (default: the coordinator's --audit).", valueName: "rate"))
    var audit: Double?
    @OptionGroup var hooks: HookOptions
    @OptionGroup var overwriting: OverwriteOptions
    @OptionGroup var permissions: OutputModeOptions
    @Flag(help: "INPUT and -o are absolute paths as the coordinator sees them, not checked on this host; the coordinator probes the input and refuses an existing output unless -y.")
    var remotePath = false
    @Flag(help: "Print the job as JSON on stdout instead of its id alone (with --wait, a second line when it ends).") var json = false
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        _ = try encode.spec(segmentSeconds: segmentSeconds, output: output)
        if hooks.isSet && !wait { throw ValidationError("--on-complete and --on-error need --wait") }
        if let priority, !JobStore.priorities.contains(priority) { throw ValidationError("--priority must be between 0 and 100") }
        if let audit, !(0...1).contains(audit) { throw ValidationError("--audit is a share between 0 and 1") }
    }

    func run() throws {
        let report = JobReport(input: input, output: output)
        try hooks.reporting(report) { try submit(report) }
    }

    func submit(_ report: JobReport) throws {
        var spec: JobSpec
        let priority: Int
        do throws(TesseraError) {
            try FilePaths.check(input: input, output: output)
            spec = try encode.spec(segmentSeconds: segmentSeconds, output: output)
            spec.outputMode = permissions.bits
            spec.audit = audit
            let file = try encode.settings.map { (path: String) throws(TesseraError) in try SettingsFile.read(path) }
            priority = self.priority ?? file?.priority ?? JobStore.defaultPriority
            guard JobStore.priorities.contains(priority) else { throw TesseraError(.settings, "priority", "must be between 0 and 100") }
            if remotePath {
                guard input.hasPrefix("/"), output.hasPrefix("/") else {
                    throw TesseraError(.settings, "--remote-path", "INPUT and -o must be absolute paths, as the coordinator sees them")
                }
                try overwriting.check([])
                spec.replacesOutputs = overwriting.overwrite
            } else {
                try OutputPath.checkNaming(output, input: input, ladder: spec.ladder)
                try overwriting.check(spec.writtenPaths(for: output))
                try overwriting.check(folders: spec.replacedFolders(for: output))
            }
        } catch {
            throw report.fail(error)
        }
        let inputPath = InputSource.standardized(input)
        let outputPath = InputSource.standardized(output)
        if let location = S3Location(url: outputPath) {
            do throws(TesseraError) { try ObjectUpload.checkBucket(location) } catch { throw report.fail(error) }
        }
        if let location = S3Location(url: inputPath) {
            // HEADed here: a missing or refused object is one line now, not a failed job later.
            do throws(TesseraError) { _ = try InputSource.head(location) } catch { throw report.fail(error) }
        } else if !remotePath, !FileManager.default.fileExists(atPath: inputPath) {
            throw report.fail(Self.notHere(input))
        }
        // HLS and DASH outputs (`.m3u8`, `.mpd`) come with a ladder, checked with the options.
        guard spec.ladder?.packaging.isStreaming == true || ["mp4", "m4v"].contains(URL(fileURLWithPath: outputPath).pathExtension.lowercased()) else {
            throw report.fail(StoreError("\(output): Tessera writes MP4: name the output .mp4 or .m4v"))
        }
        var final: JobRecord?
        do throws(StoreError) {
            let store = try database.open(announcing: true)
            defer { store.close() }
            // Its size orders the queue (shortest first); a path only the coordinator reads has none known.
            let id = try store.submit(input: inputPath, output: outputPath, spec: spec, coordinator: coordinator,
                                      priority: priority, work: remotePath ? nil : InputWork.pixels(inputPath))
            report.jobID = id
            // Written at once, not buffered: `--wait` follows the job before the command ends.
            FileHandle.standardOutput.write(Data("\(json ? CanonicalJSON.encode(SubmittedJob(try store.job(id))) : id)\n".utf8))
            CoordinatorWarning.warnIfNone(store, assigned: coordinator)
            if wait { final = try Follower(store: store, id: id).follow() }
        } catch {
            throw report.fail(error)
        }
        if let final, json { print(CanonicalJSON.encode(final)) }
        if let final { report.record(final) }
        if let final, final.state != .done { throw ExitCode(1) }
    }

    /// An input this host does not have: `submit` checks the paths where it runs, unless told they are the
    /// coordinator's alone.
    static func notHere(_ input: String) -> StoreError {
        StoreError("\(input): no such file on this host: submit checks the input and output where it runs; "
                   + "give --remote-path when the paths are the coordinator's only")
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show a job (or every job that has not ended).")

    @Argument(help: "A job id, or a unique prefix of one.") var job: String?
    @Flag(help: "Print JSON for scripts.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        do throws(StoreError) {
            if let job { try JobStore.validateID(job) }
            let store = try database.open()
            defer { store.close() }
            if let job {
                let record = try store.job(job)
                print(json ? CanonicalJSON.encode(record, pretty: true) : JobText.line(record))
            } else {
                let open = try store.openJobs()
                print(json ? CanonicalJSON.encode(open, pretty: true) : JobText.table(open))
            }
        } catch {
            throw Tessera.fail(error)
        }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List jobs, newest first.")

    @Option(help: "Only jobs in this state: \(JobState.allCases.map(\.rawValue).joined(separator: ", ")).") var state: JobState?
    @Option(help: "Show at most this many jobs, the newest.") var limit: Int = 50
    @Flag(help: "Print JSON for scripts.") var json = false
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        do throws(StoreError) {
            let store = try database.open()
            defer { store.close() }
            let jobs = try store.jobs(state: state, limit: limit)
            print(json ? CanonicalJSON.encode(jobs, pretty: true) : JobText.table(jobs))
        } catch {
            throw Tessera.fail(error)
        }
    }
}

struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Cancel a job, or every job that has not ended.")

    @Argument(help: "A job id, or a unique prefix of one.") var job: String?
    @Flag(help: "Cancel every job that has not ended.") var all = false
    @Flag(help: "Print the outcome as JSON on stdout.") var json = false
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard (job != nil) != all else { throw ValidationError("give a job id or --all") }
    }

    func run() throws {
        do throws(StoreError) {
            let store = try database.open()
            defer { store.close() }
            var outcome = CancelOutcome()
            if all {
                outcome.canceled = try store.cancelAll()
                FileHandle.standardError.write(Data("tessera: canceled \(outcome.canceled.count) job(s)\n".utf8))
                if !json { outcome.canceled.forEach { print($0) } }
            } else if let job {
                let record = try store.job(job)
                if try store.cancel(record.id) {
                    outcome.canceled = [record.id]
                    FileHandle.standardError.write(Data("tessera: canceled \(record.id)\n".utf8))
                } else {
                    outcome.alreadyEnded = [record.id]
                    FileHandle.standardError.write(Data("tessera: job \(record.id) had already ended (\(record.state.rawValue))\n".utf8))
                }
            }
            if json { print(CanonicalJSON.encode(outcome)) }
        } catch {
            throw Tessera.fail(error)
        }
    }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch", abstract: "Follow a job's progress until it ends; exit status is its result.")

    @Argument(help: "A job id, or a unique prefix of one.") var job: String
    @Flag(help: "Print the job as JSON on stdout, one object a line, each time it changes.") var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let record: JobRecord
        do throws(StoreError) {
            let store = try database.open()
            defer { store.close() }
            let current = try store.job(job)
            if current.state == .queued { CoordinatorWarning.warnIfNone(store, assigned: current.assignedCoordinator) }
            var follower = Follower(store: store, id: current.id)
            if json {
                var last = ""
                follower.onChange = { job in
                    let line = CanonicalJSON.encode(job)
                    guard line != last else { return }
                    last = line
                    FileHandle.standardOutput.write(Data((line + "\n").utf8))
                }
            }
            record = try follower.follow()
        } catch {
            throw Tessera.fail(error)
        }
        if record.state != .done { throw ExitCode(1) }
    }
}

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Bring the job store's schema up to date (coordinators do this when they start).")

    @OptionGroup var database: DatabaseOptions

    func run() throws {
        do throws(StoreError) {
            let store = try JobStore(url: try database.resolveURL(), reconnectTimeout: 5)
            defer { store.close() }
            let applied = try store.migrate()
            FileHandle.standardError.write(Data((applied.isEmpty ? "tessera: schema is up to date\n"
                : "tessera: applied migration(s) \(applied.map(String.init).joined(separator: ", "))\n").utf8))
        } catch {
            throw Tessera.fail(error)
        }
    }
}

extension JobState: ExpressibleByArgument {}

/// Follows a job through LISTEN/NOTIFY (with a slow poll as a safety net), showing progress on stderr.
struct Follower {
    let store: JobStore
    let id: String
    /// Called with the job each time it is read (`watch --json`).
    var onChange: ((JobRecord) -> Void)?

    init(store: JobStore, id: String) {
        self.store = store
        self.id = id
    }

    func follow() throws(StoreError) -> JobRecord {
        try store.listen()
        let progress = ProgressRenderer()
        defer { progress.finish() }
        while true {
            let job = try store.job(id)
            onChange?(job)
            progress.update(TranscodeProgress(job))
            if job.state.isFinal {
                progress.finish()
                FileHandle.standardError.write(Data("tessera: \(JobText.line(job))\n".utf8))
                return job
            }
            _ = try store.waitForChanges(timeout: 5)
        }
    }
}

enum JobText {
    static func line(_ j: JobRecord) -> String {
        var s = "\(j.id) \(j.state.rawValue)"
        if j.segmentsTotal > 0 {
            let pass = j.state == .encoding && j.pass != nil ? ", " + TranscodeProgress(j).label : ""
            s += " \(j.segmentsDone)/\(j.segmentsTotal) segments\(pass) (\(Int(j.progress * 100))%)"
        }
        s += " \(j.input) -> \(j.output)"
        if let error = j.error, j.state == .failed { s += ": \(error)" }
        if let stalled = j.stalled, !j.state.isFinal { s += " (waiting: \(stalled))" }
        if let holder = j.coordinator, !j.state.isFinal, j.state != .queued { s += " [coordinator \(holder)]" }
        return s
    }

    /// One row per job, under a header: id, state, progress, created and finished times (UTC), input and output.
    static func table(_ jobs: [JobRecord]) -> String {
        guard !jobs.isEmpty else { return "no jobs" }
        let rows = [["JOB", "STATE", "DONE", "CREATED (UTC)", "FINISHED (UTC)", "INPUT -> OUTPUT"]] + jobs.map { j in
            var files = "\(j.input) -> \(j.output)"
            if let error = j.error, j.state == .failed { files += ": \(error)" }
            return [j.id, j.state.rawValue, j.segmentsTotal > 0 ? "\(Int(j.progress * 100))%" : "-", time(j.createdAt),
                    j.finishedAt.map(time) ?? "-", files]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            (0..<5).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ") + "  " + row[5]
        }.joined(separator: "\n")
    }

    /// `2025-01-02T03:04:05.678Z` as `2025-01-02 03:04:05`.
    static func time(_ iso: String) -> String {
        String(iso.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }
}
