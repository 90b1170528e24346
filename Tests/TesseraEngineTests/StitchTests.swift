import FFmpegKit
import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

@Suite(.serialized) struct StitchTests {
    func tasks(_ plan: JobPlan) throws -> [SegmentTask] {
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        return tasks.sorted { $0.header.segment.index < $1.header.segment.index }
    }

    /// A task survives serialisation intact: the worker-side encode of the decoded blob is bit-identical.
    @Test func payloadIsSelfContained() throws {
        let probe = try MediaProbe.probe(try SourceKind.openGOP.make())
        let plan = try JobPlanner.plan(probe, options: quickOptions())
        let task = try tasks(plan)[1]
        let shipped = try SegmentTask(serialized: task.serialized())
        #expect(shipped == task)
        let direct = try SegmentEncoder.encode(task)
        let remote = try SegmentEncoder.encode(shipped)
        let identical = direct.packets == remote.packets
        #expect(identical, "encoding the same task twice gave different bytes")
        #expect(direct.header.extradata == remote.header.extradata)
        let result = try EncodedSegment(serialized: remote.serialized())
        #expect(result == remote)
        #expect(result.packets.first?.isKey == true, "every segment starts with a keyframe")
        #expect(result.header.frameCount == task.header.segment.frameCount)
    }

    /// Every segment's SPS/PPS must match; a segment from other settings is refused by name.
    @Test func mismatchedExtradataIsAnErrorNamingTheSegment() throws {
        let probe = try MediaProbe.probe(try SourceKind.closedGOPWithBFrames.make())
        let plan = try JobPlanner.plan(probe, options: quickOptions())
        var encoded = try tasks(plan).map { try SegmentEncoder.encode($0) }
        var odd = try tasks(plan)[2]
        odd.header.settings.profile = "main"
        encoded[2] = try SegmentEncoder.encode(odd)
        #expect(encoded[2].header.extradata != encoded[0].header.extradata)
        let path = Fixtures.output("mismatch.mp4")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try Stitcher.stitch(plan: plan, loadSegment: { encoded[$0] }, audio: nil, to: path)
            Issue.record("stitching mismatched segments succeeded")
        } catch {
            #expect(error.subject == "segment 2")
            #expect(error.problem.contains("SPS/PPS"))
        }
    }

    /// Identical settings give identical headers whichever segment (and so whichever worker) encodes.
    @Test func everySegmentHasTheSameHeaders() throws {
        let probe = try MediaProbe.probe(try SourceKind.hevc.make())
        let plan = try JobPlanner.plan(probe, options: quickOptions())
        let headers = Set(try tasks(plan).map { try SegmentEncoder.encode($0).header.extradata })
        #expect(headers.count == 1)
    }
}

@Suite(.serialized) struct SegmentReaderTests {
    /// Read on demand, in reverse order, every segment's packets equal the sequential reader's, as
    /// values and as payload bytes.
    @Test(arguments: SourceKind.allCases)
    func onDemandReadsMatchTheSequentialPass(_ kind: SourceKind) throws {
        let plan = try JobPlanner.plan(try MediaProbe.probe(try kind.make()), options: quickOptions())
        var sequential: [Int: SegmentTask] = [:]
        try SegmentSource(plan: plan).forEachTask { sequential[$0.header.segment.index] = $0 }
        let reader = try SegmentReader(plan: plan)
        // MP4 and QuickTime payloads are read from the file at the probed positions, and a raw stream's, whose packets
        // are the file; MPEG-TS and program streams split a packet across their packets, and AVI's positions are its
        // chunks', so they go through the demuxer.
        #expect((reader.direct != nil) == (plan.probe.formatName.hasPrefix("mov,") || kind.isRawStream))
        for segment in plan.cuts.segments.reversed() {
            let task = try reader.task(for: segment)
            #expect(task == sequential[segment.index], "segment \(segment.index)")
            // The coordinator's payload, read in place (or written straight from the demuxer), is the same bytes.
            #expect(try reader.payload(for: segment) == task.serialized(), "segment \(segment.index)'s payload")
        }
        // A raw stream has no times to seek by: read as values, segments are read from the start (all of them without
        // timestamps; with made-up ones, until a pass has indexed them).
        if kind.isRawStream {
            #expect((1...plan.cuts.segments.count).contains(reader.readsFromStart))
        } else {
            #expect(reader.readsFromStart == 0, "seeking lands before each segment")
        }
    }

    /// A still picture (a JPEG, which FFmpeg's image2 demuxer finds nothing in after any seek) is read from the
    /// input opened again: its one packet, as the sequential reader gives it.
    @Test func aStillPictureIsReadFromAFreshOpen() throws {
        let still = try Fixtures.media("still.jpg", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "1"])
        let plan = try JobPlanner.plan(try MediaProbe.probe(still), options: quickOptions())
        #expect(plan.cuts.segments.count == 1)
        var sequential: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { sequential.append($0) }
        let reader = try SegmentReader(plan: plan)
        let task = try reader.task(for: plan.cuts.segments[0])
        #expect(task.packets.count == 1 && [task] == sequential)
        #expect(try reader.payload(for: plan.cuts.segments[0]) == task.serialized())
    }

    /// Opened again to read packets, a file whose header names every stream the probe found is taken as
    /// it is (no frames decoded to learn the streams again): the streams are the same either way.
    @Test(arguments: SourceKind.allCases)
    func aHeaderTakenForTheProbeNamesTheSameStreams(_ kind: SourceKind) throws {
        let path = try kind.make()
        let searched = try MediaInput(path: path)
        let header = try MediaInput(path: path, probedStreams: searched.streams.count)
        func facts(_ input: MediaInput) -> [String] {
            input.streams.map { "\($0.kind) \($0.codecName) \($0.width)x\($0.height) \($0.timeBase)" }
        }
        #expect(facts(header) == facts(searched))
        // A count that does not match (a probe of another file) searches as before.
        #expect(facts(try MediaInput(path: path, probedStreams: searched.streams.count + 1)) == facts(searched))
    }

    /// A file touched since the probe is not read in place (its packets may have moved): the payload
    /// comes through the demuxer, which checks every packet against the probe.
    @Test func aChangedFileIsNotReadInPlace() throws {
        let source = try SourceKind.closedGOPWithBFrames.make()
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-direct-\(UUID().uuidString).mp4").path
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let plan = try JobPlanner.plan(try MediaProbe.probe(copy), options: quickOptions())
        let reader = try SegmentReader(plan: plan)
        let direct = try #require(reader.direct)
        let segment = try #require(plan.cuts.segments.last)
        let expected = try reader.task(for: segment).serialized()
        let runOut = plan.runOut(after: segment)
        let shipped = plan.probe.packets[segment.firstPacket...segment.lastShippedPacket(runOut)]
        let header = CanonicalJSON.data(plan.task(segment, runOut, packets: []).header)
        let dataBytes = shipped.reduce(0) { $0 + $1.size }
        #expect(direct.payload(header: header, packets: shipped, dataBytes: dataBytes) == expected)

        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: copy)
        #expect(direct.payload(header: header, packets: shipped, dataBytes: dataBytes) == nil)
        #expect(try reader.payload(for: segment) == expected, "through the demuxer instead")
    }
}

@Suite(.serialized) struct RunOutEncodeTests {
    /// Every segment but the last carries frames past its end, which the encoder sees but the output does
    /// not hold: the output has every source frame once, and the frame before each join is a P picture
    /// (nothing kept refers to a run-out frame), as ffprobe reads it.
    @Test(arguments: [SourceKind.closedGOPWithBFrames, .openGOP])
    func runOutFramesAreSeenNotKept(_ kind: SourceKind) throws {
        let source = try kind.make()
        let plan = try JobPlanner.plan(try MediaProbe.probe(source), options: quickOptions())
        var tasks: [SegmentTask] = []
        try SegmentSource(plan: plan).forEachTask { tasks.append($0) }
        tasks.sort { $0.header.segment.index < $1.header.segment.index }
        #expect(tasks.dropLast().allSatisfy { $0.header.runOut != nil })
        #expect(tasks.last?.header.runOut == nil)
        for task in tasks {
            let encoded = try SegmentEncoder.encode(task)
            #expect(encoded.header.frameCount == task.header.segment.frameCount)
            #expect(encoded.packets.allSatisfy { ($0.pts ?? .max) < task.header.segment.endPTS })
        }

        let output = Fixtures.output("run-out-\(kind.rawValue).mp4")
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try LocalTranscoder().transcode(input: source, output: output, options: quickOptions())
        let types = try Tool.ffprobe(["-select_streams", "v", "-show_entries", "frame=pict_type", "-of", "csv=p=0", output])
            .split(whereSeparator: \.isNewline).compactMap { $0.split(separator: ",").first.map(String.init) }
        var start = 0
        for segment in plan.cuts.segments.dropLast() {
            start += segment.frameCount
            #expect(types[start] == "I", "segment \(segment.index + 1) starts with an I picture")
            #expect(types[start - 1] == "P", "segment \(segment.index) ends with a P picture, not \(types[start - 1])")
        }
    }
}
