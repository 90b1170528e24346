import Foundation
import Logging
import TesseraCore
import TesseraEngine
import TesseraStore
import TesseraTesting
import ZMQKit
@testable import TesseraCluster

/// A coordinator with its store in memory, and workers, in this process: one libzmq context, an `inproc://`
/// endpoint, each part on a thread of its own as in a real process. `shutdown()` stops them all.
final class InProcessCluster: Sendable {
    let database = InMemoryJobDatabase()
    let context: ZMQContext
    let endpoint = "inproc://tessera-loop-\(UUID().uuidString.prefix(8))"
    /// The spool, the input and the outputs.
    let directory: URL
    let coordinator: Coordinator
    let stop = CancellationFlag()
    let threads = DispatchGroup()
    /// What a coordinator or worker thread failed with.
    let failures = Locked<[String]>([])
    static let quiet = Logger(label: "tessera.test") { _ in SwiftLogNoOpLogHandler() }
    /// Heartbeats every 0.2 s: a peer silent for a second is gone.
    static let heartbeatInterval = 0.2, liveness = 5

    init() throws {
        EngineInfo.configureLogging(verbose: false)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-loop-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        context = try ZMQContext()
        var options = Coordinator.Options(bind: endpoint, databaseURL: "in memory", spool: directory.appendingPathComponent("spool"),
                                          coordinatorID: "coordinator-test")
        options.heartbeatInterval = Self.heartbeatInterval
        options.liveness = Self.liveness
        // Longer than a test waits: a lost worker's segment returns because the worker went silent, not by expiry.
        options.leaseSeconds = 60
        // Audits are off unless a job asks; one with no other worker to audit it is given up soon.
        options.auditWait = 0.5
        coordinator = Coordinator(options: options, logger: Self.quiet, stores: database.sessions, context: context)
        let (coordinator, stop, failures) = (coordinator, stop, failures)
        startThread(name: "test-coordinator", group: threads) {
            do { try coordinator.run(stop: stop) } catch { failures.withValue { $0.append("coordinator: \(error)") } }
        }
    }

    /// Starts a worker that encodes (`WorkerSession`, as `tessera worker` runs one per coordinator).
    func startWorker(_ id: String, slots: Int = 1, threads encoderThreads: Int = 1) {
        let options = ClusterWorker.Options(endpoint: endpoint, workerID: id, slots: slots, threads: encoderThreads,
                                            heartbeatInterval: Self.heartbeatInterval, liveness: Self.liveness)
        let (context, stop, failures, endpoint) = (context, stop, failures, endpoint)
        startThread(name: "test-\(id)", group: threads) {
            let session = WorkerSession(options: options, endpoint: endpoint, pool: SlotPool(slots), logger: Self.quiet, context: context)
            do throws(ZMQError) { try session.run(stop: stop) } catch { failures.withValue { $0.append("\(id): \(error)") } }
        }
    }

    /// A 2 s 160x90 clip with a tone, a keyframe every 0.4 s, made by the ffmpeg CLI.
    func makeClip() throws -> String {
        let path = directory.appendingPathComponent("clip.mp4").path
        try Self.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-f", "lavfi",
                                 "-i", "sine=frequency=440:sample_rate=48000", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
                                 "-g", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path])
        return path
    }

    /// Queues a job of the clip into `name` in the directory, in half-second segments.
    func submit(_ input: String, output name: String, ladder: LadderSpec? = nil, audit: Double? = nil) throws -> (id: String, output: String) {
        let output = directory.appendingPathComponent(name).path
        var spec = JobSpec(settings: EncoderSettings(preset: "ultrafast"), segmentSeconds: 0.5)
        spec.ladder = ladder
        spec.audit = audit
        return (try database.submit(input: input, output: output, spec: spec), output)
    }

    /// Waits, on a session that listens, until the job ended; nil when it did not within `timeout` seconds.
    func waitForEnd(_ job: String, timeout: Double = 30) throws -> JobRecord? {
        let watcher = database.open()
        defer { watcher.close() }
        try watcher.listen()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let record = try watcher.job(job)
            if record.state.isFinal { return record }
            _ = try watcher.waitForJobChanges(timeout: min(1, deadline.timeIntervalSinceNow))
        }
        return nil
    }

    /// Stops the coordinator and the workers, waits for their threads, and removes the directory.
    func shutdown() {
        stop.cancel()
        threads.wait()
        context.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The output's first video stream as ffprobe reads it (decoding every frame): codec, size and frames.
    static func probe(_ path: String) throws -> (codec: String, width: Int, height: Int, frames: Int) {
        let json = try tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                                        "stream=codec_name,width,height,nb_read_frames", "-of", "json", path])
        let streams = (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["streams"] as? [[String: Any]]
        guard let stream = streams?.first, let codec = stream["codec_name"] as? String, let width = stream["width"] as? Int,
              let height = stream["height"] as? Int, let frames = (stream["nb_read_frames"] as? String).flatMap(Int.init) else {
            throw ToolFailure("ffprobe could not read \(path): \(json)")
        }
        return (codec, width, height, frames)
    }

    /// Runs `name` from the PATH; its standard output, or a failure with its standard error.
    @discardableResult
    static func tool(_ name: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile(), errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolFailure("\(name) exited with \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }
}

struct ToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
