import FFmpegKit
import Foundation
import S3Kit
import Testing
import TesseraCore
import TesseraTestSupport

/// `s3://` inputs and outputs through real `tessera` processes against moto with authentication on: frame-exact
/// both ways, a missing or refused input said at submit in one line, an object replaced mid-job failing the job,
/// and a failed job leaving neither an object nor an incomplete multipart upload.
@Suite(.serialized) final class ObjectStorageTests {
    let moto: MotoServer
    let client: S3Client
    /// 2 s of 320x240 at 25 fps, 1 s GOPs, with AAC: 50 frames.
    let source: String
    static let sourceFrames = 50

    init() throws {
        // Behind the front that checks presigned URLs: the local workers read their segments' bytes through them.
        moto = try MotoServer(presigned: true)
        client = try moto.client(creatingBucket: "media")
        source = try Fixtures.media("s3-320x240.mp4", Fixtures.lavfi + ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
                                                                         "-g", "25", "-c:a", "aac", "-shortest"])
    }

    func upload(_ path: String, _ key: String) throws {
        _ = try client.put(S3Location(bucket: "media", key: key), body: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    func download(_ key: String) throws -> String {
        let location = S3Location(bucket: "media", key: key)
        let size = try client.head(location).size
        let path = Fixtures.output("downloaded.mp4")
        try Data(client.get(location, range: 0..<size)).write(to: URL(fileURLWithPath: path))
        return path
    }

    func transcode(_ input: String, _ output: String, credentials: AWSCredentials? = nil) throws -> Tool.Output {
        try Tool.run(Tool.tesseraBinary, ["transcode", input, "-o", output, "--preset", "ultrafast", "--segment-seconds", "1", "--workers", "2"],
                     environment: moto.environment(credentials))
    }

    func expectNothingAt(_ key: String) throws {
        let missing = #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: key)) }
        #expect(missing?.code == .notFound)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
    }

    @Test func anObjectTranscodesToAFileFrameExact() throws {
        try upload(source, "in/clip.mp4")
        let output = Fixtures.output("from-s3.mp4")
        let result = try transcode("s3://media/in/clip.mp4", output)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try OutputFacts.read(output).countedFrames == Self.sourceFrames)
        #expect(!result.stderr.contains(moto.admin.secretAccessKey))
    }

    @Test func aFileTranscodesToAnObjectFrameExact() throws {
        let result = try transcode(source, "s3://media/out/clip.mp4")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try OutputFacts.read(download("out/clip.mp4")).countedFrames == Self.sourceFrames)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
    }

    /// Opening an object for libavformat reads its header, not the object: a few ranged GETs of a small share of it.
    @Test func openingAnObjectReadsOnlyWhatTheDemuxerAsks() throws {
        let large = try Fixtures.media("s3-8s-640x360.mp4", ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=8",
                                                             "-c:v", "libx264", "-preset", "ultrafast", "-g", "25"])
        try upload(large, "large.mp4")
        let location = S3Location(bucket: "media", key: "large.mp4")
        let object = try client.head(location)
        let reader = S3ObjectReader(client: client, location: location, object: object)
        let input = try MediaInput(source: reader, name: location.description)
        #expect(input.bestVideoStream?.width == 640)
        #expect(reader.fetchedBytes * 4 < object.size, "\(reader.fetchedBytes) of \(object.size) bytes in \(reader.requests) GETs")
    }

    /// A missing object, a missing bucket and a wrong secret: one line naming the object, at once, nothing written.
    @Test func aMissingOrRefusedInputIsOneLineAtSubmit() throws {
        try upload(source, "present.mp4")
        let output = Fixtures.output("never.mp4")
        let wrongSecret = AWSCredentials(accessKeyID: moto.admin.accessKeyID, secretAccessKey: "not-the-secret")
        let cases: [(String, AWSCredentials?, String)] = [("s3://media/absent.mp4", nil, "no such object"),
                                                          ("s3://nobucket/in.mp4", nil, "does not exist"),
                                                          ("s3://media/present.mp4", wrongSecret, "refused the credentials")]
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        for (input, credentials, said) in cases {
            let submitted = try Tool.run(Tool.tesseraBinary, ["submit", input, "-o", output] + cluster.db, environment: moto.environment(credentials))
            let line = submitted.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(submitted.status != 0)
            #expect(line.contains(input) && line.contains(said) && !line.contains("\n"), "\(line)")
            #expect(!line.contains("not-the-secret"))
            let transcoded = try transcode(input, output, credentials: credentials)
            #expect(transcoded.status != 0)
            #expect(transcoded.stderr.contains(input), "\(transcoded.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    /// The input replaced after the first segment: the job fails naming the object, and its s3:// output never appears.
    @Test func anObjectReplacedMidJobFailsTheJob() throws {
        try upload(source, "input.mp4")
        let other = try Fixtures.media("s3-other.mp4", ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2", "-c:v", "libx264",
                                                        "-preset", "ultrafast", "-g", "25"])
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        for (name, value) in moto.environment() { setenv(name, value, 1) }
        defer { for name in moto.environment().keys { unsetenv(name) } }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let job = try cluster.submit("s3://media/input.mp4", "s3://media/replaced-out.mp4", ["--preset", "slow"])
        let store = try cluster.openStore()
        defer { store.close() }
        cluster.waitUntil(timeout: 60) { (try? store.job(job).segmentsDone) ?? 0 >= 1 }
        try upload(other, "input.mp4")
        let record = try cluster.wait(job)
        #expect(record.state == .failed)
        let error = record.error ?? ""
        #expect(error.hasPrefix("s3://media/input.mp4: "), "\(error)")
        #expect(!error.contains("\n"))
        try expectNothingAt("replaced-out.mp4")
        // The keys stay in the coordinator's environment: not in its log, the job's status or its events.
        let status = try Tool.run(cluster.binary, ["status", job, "--json"] + cluster.db)
        let events = try Tool.run(cluster.binary, ["events", job, "--json", "--no-follow"] + cluster.db)
        #expect(status.status == 0 && events.status == 0, "\(events.stderr)")
        #expect(status.text.contains("s3://media/input.mp4") && events.text.contains("s3://media/input.mp4"))
        for text in [status.text, events.text, cluster.log("coordinator.log"), cluster.log("w.log")] {
            #expect(!text.contains(moto.admin.secretAccessKey))
        }
    }

    /// Keys that may read but not write: the job fails at its upload naming the output, which never appears, and no
    /// multipart upload is left.
    @Test func aRefusedUploadLeavesNothing() throws {
        try upload(source, "readable.mp4")
        let result = try transcode("s3://media/readable.mp4", "s3://media/refused.mp4", credentials: moto.reader)
        #expect(result.status != 0)
        #expect(result.stderr.contains("s3://media/refused.mp4"), "\(result.stderr)")
        try expectNothingAt("refused.mp4")
    }

    /// An output bucket that does not exist is one line before anything is encoded, at submit as in transcode.
    @Test func aMissingOutputBucketIsOneLineFirst() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        let submitted = try Tool.run(Tool.tesseraBinary, ["submit", source, "-o", "s3://nobucket/out.mp4"] + cluster.db,
                                     environment: moto.environment())
        let transcoded = try transcode(source, "s3://nobucket/out.mp4")
        for result in [submitted, transcoded] {
            // The last line of stderr: `transcode` may first say that it started the job store.
            let line = result.stderr.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
            #expect(result.status != 0)
            #expect(line.contains("s3://nobucket/out.mp4") && line.contains("does not exist"), "\(result.stderr)")
        }
        let store = try cluster.openStore()
        defer { store.close() }
        #expect(try store.jobs().isEmpty)
    }
}
