import FFmpegKit
import Foundation
import S3Kit
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// An output stitched straight into a multipart upload on moto (authentication on, behind a front that fails a fifth
/// of the requests), verified on its way: the same media as the stitch to a file, part 1 held until `complete()`,
/// and nothing left when verification fails.
@Suite(.serialized) final class ObjectStitchTests {
    let moto: MotoServer
    let client: S3Client
    let plan: JobPlan
    let segments: [EncodedSegment]
    let audio: AudioTrack?

    /// A real encode with audio and B-frames, each packet padded with a filler NAL unit (decoders skip it) so that
    /// the output spans several 5 MiB parts without encoding megabytes.
    init() throws {
        // A flaky store: a fifth of the requests answered 503 SlowDown or dropped after the work was done.
        moto = try MotoServer(faults: 0.2)
        client = try moto.client(creatingBucket: "media")
        let probe = try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make())
        plan = try JobPlanner.plan(probe, options: quickOptions())
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        segments = try tasks.sorted { $0.header.segment.index < $1.header.segment.index }.map { task in
            var segment = try SegmentEncoder.encode(task)
            for k in segment.packets.indices { segment.packets[k].data += Self.filler(120_000) }
            return segment
        }
        audio = try AudioTranscoder.run(plan)
    }

    /// An H.264 filler data NAL unit of `count` bytes behind its 4-byte length.
    static func filler(_ count: Int) -> [UInt8] {
        let size = UInt32(count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff), 12]
            + [UInt8](repeating: 0xff, count: count - 2) + [0x80]
    }

    func stream(to key: String, expectation: Verifier.Expectation? = nil, index: ReservedIndex? = nil,
                timings: inout ObjectStitch.Timings) throws(TesseraError) -> PendingObject {
        let load = { (k: Int) throws(TesseraError) -> EncodedSegment in self.segments[k] }
        let expected = expectation ?? Verifier.expectation(for: plan, audio: audio)
        let location = S3Location(bucket: "media", key: key)
        guard let index else {
            return try ObjectStitch.stitch(plan: plan, loadSegment: load, audio: audio, expectation: expected, to: location,
                                           client: client, partSize: S3MultipartUpload.minimumPartSize, timings: &timings)
        }
        return try ObjectStitch.stream(plan: plan, loadSegment: load, audio: audio, expectation: expected, index: index,
                                       to: location, client: client, partSize: S3MultipartUpload.minimumPartSize, timings: &timings)
    }

    func download(_ key: String) throws -> [UInt8] {
        let location = S3Location(bucket: "media", key: key)
        return try client.get(location, range: 0..<client.head(location).size)
    }

    /// The media (mdat's body) and the top-level boxes of an MP4's bytes.
    static func layout(_ bytes: [UInt8]) -> (boxes: [String], media: ArraySlice<UInt8>) {
        let boxes = MP4Layout.boxes(in: bytes, 0..<bytes.count)
        let mdat = boxes.first { $0.type == "mdat" }!
        return (boxes.map(\.type), bytes[mdat.offset + mdat.headerSize..<mdat.offset + mdat.size])
    }

    /// Each decoded frame's hash, audio and video, from ffmpeg.
    static func frameHashes(_ path: String) throws -> [Substring] {
        let run = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0", "-f", "framemd5", "-"])
        return String(decoding: run.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }
    }

    func expectNothingAt(_ key: String) throws {
        let missing = #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: key)) }
        #expect(missing?.code == .notFound)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
    }

    @Test func theStreamedObjectIsTheStitchedFileInParts() throws {
        let path = Fixtures.output("object-stitch-local.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Stitcher.stitch(plan: plan, loadSegment: { segments[$0] }, audio: audio, to: path)
        let local = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(local.count > 3 * S3MultipartUpload.minimumPartSize)

        var timings = ObjectStitch.Timings()
        let pending = try stream(to: "out.mp4", timings: &timings)
        #expect(timings.passes == 2, "the front the muxer wrote was the one predicted")
        // Parts 2… are up; part 1 waits, and the object is not there until it is completed.
        #expect(try client.listMultipartUploads(bucket: "media").map(\.key) == ["out.mp4"])
        #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: "out.mp4")) }
        try pending.complete()
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)

        let object = try download("out.mp4")
        // The same media; the index before it, in room with an 8-byte free box to spare.
        #expect(object.count == local.count + 8)
        #expect(Self.layout(object).media == Self.layout(local).media)
        #expect(Self.layout(object).boxes == ["ftyp", "moov", "free", "free", "mdat"])
        let downloaded = Fixtures.output("object-stitch-object.mp4")
        defer { try? FileManager.default.removeItem(atPath: downloaded) }
        try Data(object).write(to: URL(fileURLWithPath: downloaded))
        let facts = try OutputFacts.read(downloaded)
        #expect(facts.countedFrames == plan.outputFrameCount)
        #expect(facts.decodeErrors.isEmpty, "\(facts.decodeErrors)")
        #expect(try Self.frameHashes(downloaded) == Self.frameHashes(path))
    }

    /// A verifier that finds the output wrong stops the job: the upload is aborted, no object, no parts. Wrong at the
    /// end (one frame more expected), or at the start while the stitch is still streaming (another size expected).
    @Test(arguments: ["frames", "size"]) func aFailedVerificationLeavesNothing(_ wrong: String) throws {
        var expected = Verifier.expectation(for: plan, audio: audio)
        if wrong == "frames" { expected.frameCount += 1 } else { expected.width += 2 }
        var timings = ObjectStitch.Timings()
        let error = #expect(throws: TesseraError.self) { try self.stream(to: "wrong.mp4", expectation: expected, timings: &timings) }
        #expect(error?.kind == .verification)
        #expect(error?.subject == "s3://media/wrong.mp4")
        #expect(error?.problem.contains(wrong == "frames" ? "video frames" : "the plan has") == true, "\(String(describing: error))")
        try expectNothingAt("wrong.mp4")
    }

    /// When the muxer writes another front than the one predicted, the verifier reads again behind the one it wrote,
    /// from a stitch that must make the same media bytes, and the object is what the muxer wrote.
    @Test func anUnpredictedFrontIsVerifiedAgain() throws {
        let load = { (k: Int) throws(TesseraError) -> EncodedSegment in self.segments[k] }
        let index = try ObjectStitch.measure(plan: plan, loadSegment: load, audio: audio, name: "s3://media/again.mp4")
        // The same room with another kind of free box: the verifier accepts it, the muxer writes `free`.
        var front = index.front
        let free = MP4Layout.boxes(in: front, 0..<front.count).first { $0.type == "free" }!
        front.replaceSubrange(free.offset + 4..<free.offset + 8, with: Array("skip".utf8))
        let altered = ReservedIndex(front: front, reserve: index.reserve, size: index.size)
        var timings = ObjectStitch.Timings()
        try stream(to: "again.mp4", index: altered, timings: &timings).complete()
        #expect(timings.passes == 2, "an upload stitch and a verifying stitch")
        #expect(Array(try download("again.mp4").prefix(index.mediaStart)) == index.front)
    }
}
