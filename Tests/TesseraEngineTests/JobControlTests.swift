import FFmpegKit
import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

@Suite(.serialized) struct JobControlTests {
    /// A canceled job stops, and leaves neither the output nor its temporary file or spool behind.
    @Test func cancelLeavesNothingBehind() throws {
        let source = try SourceKind.singleKeyframe.make()
        let dir = Fixtures.directory.appendingPathComponent("cancel-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("out.mp4").path
        let flag = CancellationFlag()
        let transcoder = LocalTranscoder(cancellation: flag, progress: { p in
            if p.phase == .encoding && p.segmentsDone >= 1 { flag.cancel() }
        })
        do {
            _ = try transcoder.transcode(input: source, output: output, options: quickOptions(segmentSeconds: 0.5, workers: 1))
            Issue.record("a canceled job completed")
        } catch {
            #expect(error.kind == .canceled)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// Target bitrate (one-pass ABR with VBV) is frozen into every segment like CRF.
    @Test func bitrateModeHitsItsTarget() throws {
        let source = try Fixtures.media("noise-8s.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "8",
                                                         "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-g", "50"])
        let output = Fixtures.output("abr.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        var options = quickOptions(segmentSeconds: 2)
        options.settings = EncoderSettings(preset: "veryfast", crf: nil, bitrate: 400_000, maxrate: 600_000, bufsize: 800_000)
        let report = try LocalTranscoder().transcode(input: source, output: output, options: options)
        #expect(report.plan.cuts.segments.count >= 3)
        let size = try #require(FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        let bitrate = Double(size * 8) / 8.0
        #expect(abs(bitrate - 400_000) < 400_000 * 0.2, "average \(Int(bitrate)) b/s for a 400 kb/s target")
        let check = try FrameCheck.compare(source: source, output: output, width: 320, height: 240)
        #expect(check.outputFrames == check.sourceFrames)
    }

    /// With `--rotate none` the pixels keep their stored orientation and the display matrix goes with
    /// the video, so players still show it upright (the default turns the pixels: EncodingOptionsTests).
    @Test func displayRotationIsCarriedWhenPixelsAreKept() throws {
        let plain = try SourceKind.closedGOPWithBFrames.make()
        let rotated = try Fixtures.media("rotated.mp4", ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
        let output = Fixtures.output("rotated-out.mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        var options = quickOptions()
        options.picture.rotate = "none"
        _ = try LocalTranscoder().transcode(input: rotated, output: output, options: options)
        func rotation(_ path: String) throws -> String {
            try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream_side_data=rotation", "-of", "csv=p=0", path])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let source = try rotation(rotated)
        #expect(!source.isEmpty && source != "0", "the fixture is rotated: '\(source)'")
        #expect(try rotation(output) == source)
    }
}

@Suite(.serialized) struct DeterminismTests {
    /// Every segment's encode is a function of its payload alone: one encoder or two, the same bytes.
    @Test func workerCountDoesNotChangeTheOutput() throws {
        let source = try SourceKind.openGOP.make()
        let one = Fixtures.output("one-worker.mp4"), two = Fixtures.output("two-workers.mp4")
        defer {
            try? FileManager.default.removeItem(atPath: one)
            try? FileManager.default.removeItem(atPath: two)
        }
        var options = quickOptions(workers: 1)
        options.segmentSeconds = 1
        _ = try LocalTranscoder().transcode(input: source, output: one, options: options)
        options.workers = 2
        _ = try LocalTranscoder().transcode(input: source, output: two, options: options)
        #expect(try Data(contentsOf: URL(fileURLWithPath: one)) == Data(contentsOf: URL(fileURLWithPath: two)))
    }

    /// Nor on what the process's heap held before: blocks of every size an encode uses, filled with
    /// other bytes each round and freed, are kept by the allocator (as a worker keeps them) and handed to
    /// libx264 next. What makes it so is the pre-fill of every allocation (`FFmpeg.deterministicAllocations`):
    /// without it, one CI run in five saw two encodes of one segment differ.
    @Test func anEncodeIgnoresWhatTheHeapHeldBefore() throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try SourceKind.openGOP.make()), options: quickOptions())
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        let clean = try tasks.map { try SegmentEncoder.encode($0).packets }
        ProcessAllocator.keepFreedMemory()
        for round in 0..<3 {
            var blocks: [UnsafeMutableRawPointer] = []
            for size in [256, 4 << 10, 64 << 10, 300 << 10, 1 << 20, 4 << 20] {
                for _ in 0..<6 {
                    guard let block = malloc(size) else { continue }
                    memset(block, Int32(0x11 + 0x44 * round), size)
                    blocks.append(block)
                }
            }
            for block in blocks { free(block) }
            let dirty = try tasks.map { try SegmentEncoder.encode($0).packets }
            #expect(dirty == clean, "round \(round)")
        }
    }
}
