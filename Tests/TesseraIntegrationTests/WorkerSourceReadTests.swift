import Foundation
import S3Kit
import Testing
import TesseraCore
import TesseraStore
import TesseraTestSupport

/// Workers that read an `s3://` input's bytes themselves, through presigned URLs checked as S3 checks them (moto with
/// authentication on, behind `PresignedFront`): real coordinator and worker processes, the workers with no AWS
/// variable in their environment.
@Suite(.serialized) final class WorkerSourceReadTests {
    let moto: MotoServer
    let client: S3Client

    init() throws {
        moto = try MotoServer(presigned: true)
        client = try moto.client(creatingBucket: "media")
    }

    /// 2 s of 320x240 at 25 fps, 1 s GOPs, with AAC interleaved: 50 frames, in the container `ext` names.
    static func source(_ ext: String) throws -> String {
        try Fixtures.media("worker-read-320x240.\(ext)", Fixtures.lavfi + ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25",
                                                                         "-c:a", "aac", "-shortest"])
    }

    func upload(_ path: String, _ key: String) throws {
        _ = try client.put(S3Location(bucket: "media", key: key), body: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The coordinator with this moto's keys and a metrics port; each worker with no AWS variable at all.
    func start(_ cluster: Cluster, metrics: Int, workers: Int = 1, coordinator extra: [String] = [], worker faults: [String] = []) throws {
        let own = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") }
        try cluster.startCoordinator(["--metrics-listen", "127.0.0.1:\(metrics)"] + extra, environment: own.merging(moto.environment()) { $1 })
        // Its metrics listener may start after its socket does (it refused a connection on a loaded machine).
        _ = try HTTP.poll(metrics, "/metrics", status: 200, timeout: 60)
        for n in 0..<workers { try cluster.startWorker("w\(n)", faults, environment: own) }
    }

    func submit(_ cluster: Cluster, _ input: String, _ output: String) throws -> String {
        let result = try Tool.run(cluster.binary, ["submit", input, "-o", output, "--preset", "veryfast", "--segment-seconds", "1"] + cluster.db,
                                  environment: moto.environment())
        guard result.status == 0 else { throw ToolError("submit: \(result.stderr)") }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func sourceBytesSent(_ port: Int) throws -> Double {
        try #require(HTTP.samples(try HTTP.get(port, "/metrics").body)["tessera_source_bytes_sent_total"])
    }

    /// The MD5 of the output's video packets, by ffmpeg.
    static func videoDigest(_ path: String) throws -> String {
        try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "md5", "-"]).text
    }

    /// An MP4 or Matroska input from S3 encodes to the same video as from the file, and its tasks carried no source
    /// bytes; MPEG-TS, whose packets are cut in 188-byte pieces, is shipped as before and frame-exact too.
    @Test func workersReadTheirOwnBytesFrameExact() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let metrics = Cluster.freePort()
        try start(cluster, metrics: metrics, workers: 2)
        for (ext, readByWorkers) in [("mp4", true), ("mkv", true), ("ts", true)] {
            let source = try Self.source(ext)
            try upload(source, "in/clip.\(ext)")
            let before = try sourceBytesSent(metrics)
            let output = Fixtures.output("worker-read-\(ext).mp4")
            let record = try cluster.wait(try submit(cluster, "s3://media/in/clip.\(ext)", output))
            #expect(record.state == .done, "\(ext): \(record.error ?? "")")
            #expect(try OutputFacts.read(output).countedFrames == ObjectStorageTests.sourceFrames, "\(ext)")
            let sent = try sourceBytesSent(metrics) - before
            #expect(readByWorkers ? sent == 0 : sent > 0, "\(ext): \(sent) source bytes in the tasks")
            if readByWorkers {
                let local = Fixtures.output("worker-read-local-\(ext).mp4")
                #expect(try cluster.wait(try submit(cluster, source, local)).state == .done)
                #expect(try Self.videoDigest(output) == Self.videoDigest(local))
                #expect(try sourceBytesSent(metrics) > before, "the local file's tasks carry its bytes")
            }
        }
        for (id, worker) in cluster.workers {
            let environment = try String(contentsOfFile: "/proc/\(worker.processIdentifier)/environ", encoding: .utf8)
            #expect(!environment.contains("AWS_"), "\(id)'s environment")
            #expect(!cluster.log("\(id).log").contains("X-Amz-Signature"))
        }
        #expect(!cluster.log("coordinator.log").contains("X-Amz-Signature"))
    }

    /// Other kinds of the same containers, read by the workers and encoded exactly as from the file: B-frames (decode
    /// order differs from presentation, several frames' timestamps guessed), 192-byte M2TS packets (cameras' .MTS),
    /// transport timestamps that wrap past 2^33 mid-clip, HEVC in MPEG-TS, VP9 in WebM, MPEG-4 Part 2 in AVI, H.264
    /// with B-frames in AVI (no pts at all), MPEG-2 in MXF (camera masters).
    @Test func otherKindsAreReadByWorkersFrameExact() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let metrics = Cluster.freePort()
        try start(cluster, metrics: metrics, workers: 2)
        let x264 = ["-t", "2", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-c:a", "aac", "-shortest"]
        let kinds: [(name: String, arguments: [String])] = [
            ("bframes.ts", x264), ("bframes.mkv", x264),
            ("camera.m2ts", x264 + ["-f", "mpegts", "-mpegts_m2ts_mode", "1"]),
            ("wrapping.ts", x264 + ["-output_ts_offset", "95442.5"]),
            ("hevc.ts", ["-t", "2", "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "keyint=25:log-level=error", "-c:a", "aac", "-shortest"]),
            ("vp9.webm", ["-t", "2", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "25", "-c:a", "libopus", "-shortest"]),
            ("archive.avi", ["-t", "2", "-c:v", "mpeg4", "-q:v", "4", "-g", "25", "-c:a", "libmp3lame", "-shortest"]),
            // No picture has a pts: the probe times them, and the workers take those times from the task.
            ("bframes.avi", ["-t", "2", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3", "-c:a", "libmp3lame", "-shortest"]),
            ("camera.mxf", ["-t", "2", "-c:v", "mpeg2video", "-g", "12", "-bf", "2", "-b:v", "5M", "-c:a", "pcm_s16le", "-ar", "48000"]),
        ]
        for kind in kinds {
            let source = try Fixtures.media("worker-read-\(kind.name)", Fixtures.lavfi + kind.arguments)
            try upload(source, "kinds/\(kind.name)")
            let before = try sourceBytesSent(metrics)
            let output = Fixtures.output("worker-read-\(kind.name).mp4")
            let record = try cluster.wait(try submit(cluster, "s3://media/kinds/\(kind.name)", output))
            #expect(record.state == .done, "\(kind.name): \(record.error ?? "")")
            #expect(try sourceBytesSent(metrics) == before, "\(kind.name): its tasks carried source bytes")
            let local = Fixtures.output("worker-read-local-\(kind.name).mp4")
            #expect(try cluster.wait(try submit(cluster, source, local)).state == .done)
            #expect(try Self.videoDigest(output) == Self.videoDigest(local), "\(kind.name)")
            #expect(try OutputFacts.read(output).countedFrames == ObjectStorageTests.sourceFrames, "\(kind.name)")
        }
    }

    /// One worker whose first source read meets `fault`, and a job from `key` (the 2 s source in its container): done,
    /// frame-exact; its segments that failed on the way.
    func faultyJob(_ cluster: Cluster, metrics: Int, fault: String, key: String) throws -> [SegmentRecord] {
        try start(cluster, metrics: metrics, worker: [fault, "1"])
        try upload(try Self.source(String(key.split(separator: ".").last!)), key)
        let output = Fixtures.output("worker-read-\(key).mp4")
        let job = try submit(cluster, "s3://media/\(key)", output)
        let record = try cluster.wait(job)
        #expect(record.state == .done, "\(key): \(record.error ?? "")")
        #expect(try OutputFacts.read(output).countedFrames == ObjectStorageTests.sourceFrames)
        let store = try cluster.openStore()
        defer { store.close() }
        return try store.segments(job).filter { $0.lastError != nil }
    }

    /// A worker whose first URL is refused (its signature damaged, as S3 refuses an expired one): that task fails with
    /// its own code, goes back, and the job completes frame-exact. For MPEG-TS the refusal comes under the demuxer
    /// (reading the object's head), which passes over it: it is still a read that failed, not bytes not as probed.
    @Test(arguments: ["mp4", "ts"]) func aRefusedURLIsRetried(_ ext: String) throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let failed = try faultyJob(cluster, metrics: Cluster.freePort(), fault: "--fault-tamper-source-urls", key: "retried.\(ext)")
        #expect(failed.count == 1 && failed[0].attempts >= 1, "\(failed.map { ($0.index, $0.attempts, $0.lastError ?? "") })")
        #expect(failed.first?.lastError?.hasPrefix("s3://media/retried.\(ext): ") == true)
        #expect(failed.first?.lastError?.contains("could not be read") == true)
        #expect(failed.first?.lastError?.contains("X-Amz-Signature") == false)
    }

    /// A worker that finds a task's bytes not as the probe said (its first packet is expected a byte longer), in an
    /// MPEG-TS stretch or a Matroska block: that task goes back with its own code, no attempt charged, the job's tasks
    /// carry their packets from then on, and it completes frame-exact.
    @Test(arguments: ["ts", "mkv"]) func bytesNotAsProbedAreCarriedInstead(_ ext: String) throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let metrics = Cluster.freePort()
        let failed = try faultyJob(cluster, metrics: metrics, fault: "--fault-misprobe-sources", key: "misprobed.\(ext)")
        #expect(try sourceBytesSent(metrics) > 0, "\(ext): the tasks after the failure carry their packets")
        #expect(failed.isEmpty, "\(ext): \(failed.map { ($0.index, $0.lastError ?? "") })")
        let log = cluster.log("coordinator.log")
        #expect(log.contains("not as probed") && log.contains("not the packets probed"), "\(ext)")
    }

    /// URLs refused on every try: the job fails after its attempts naming the object, and its s3:// output never appears.
    @Test func URLsRefusedEveryTimeFailTheJob() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try start(cluster, metrics: Cluster.freePort(), coordinator: ["--attempts", "2"], worker: ["--fault-tamper-source-urls", "1000"])
        try upload(try Self.source("mp4"), "refused.mp4")
        let record = try cluster.wait(try submit(cluster, "s3://media/refused.mp4", "s3://media/refused-out.mp4"))
        #expect(record.state == .failed)
        let error = record.error ?? ""
        #expect(error.contains("failed after 2 attempts") && error.contains("s3://media/refused.mp4: "), "\(error)")
        let missing = #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: "refused-out.mp4")) }
        #expect(missing?.code == .notFound)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
    }
}
