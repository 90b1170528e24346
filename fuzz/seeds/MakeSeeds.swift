// Writes the seed inputs of fuzz/corpus/<harness>/seed-* from real-looking messages, through the public
// encoders (frames(), serialized(), serializedWithChecksum()) so the seeds carry what they write today.
// Built and run by fuzz/make-seeds; compiled into module TesseraCore with fuzz/support/FuzzSupport.swift.

import Foundation

@main
struct MakeSeeds {
    static let job = "6f1c2a9e-3b5d-4e8f-9a71-0c2d4e6f8a1b"
    static let otherJob = "0b8e4c1d-7a2f-4c3e-8d9b-5e6f7a8b9c0d"
    /// Lease tokens as the store makes them (a random UUID without its dashes).
    static let token = "3f9c1e7a5b2d4c8e9a0b1c2d3e4f5a6b"
    static let otherToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

    static func task(index: Int, runOut: RunOut?, leadIn: Int?, tweak: Bool) -> SegmentTask {
        let first = 48 * index
        let segment = PlannedSegment(index: index, startPTS: Int64(first) * 3003, endPTS: Int64(first + 4) * 3003,
                                     firstPacket: first, lastPacket: first + 3, frameCount: 4, preRollPackets: 0,
                                     entry: index == 0 ? .idr : .openGOP)
        var codec = CodecParameters(codecName: "h264")
        codec.extradata = [0x01, 0x64, 0x00, 0x1f, 0xff, 0xe1, 0x00, 0x04, 0x67, 0x64, 0x00, 0x1f]
        codec.width = 1280
        codec.height = 720
        codec.pixelFormat = "yuv420p"
        codec.profile = 100
        codec.level = 31
        codec.sampleAspectRatio = Rational(1, 1)
        var output = VideoOutputFormat(width: 1280, height: 720, pixelFormat: "yuv420p", timeBase: Rational(1, 90000),
                                       frameRate: Rational(30000, 1001), sampleAspectRatio: Rational(1, 1), colorRange: 1,
                                       colorPrimaries: 1, colorTransfer: 1, colorSpace: 1, chromaLocation: 1)
        if tweak {
            output.quarterTurns = 1
            output.mirrorHorizontal = true
            output.scaler = "lanczos"
            output.convertsFromColorSpace = 5
            output.resamplesFrameRate = true
            output.displayMatrix = [0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30]
        }
        let settings = EncoderSettings(preset: tweak ? "veryfast" : "medium", crf: tweak ? nil : 21.5,
                                       bitrate: tweak ? 2_500_000 : nil, maxrate: tweak ? 3_000_000 : nil,
                                       bufsize: tweak ? 6_000_000 : nil, level: "4.1", keyint: 250, bframes: 3,
                                       threads: 2, keyintSeconds: tweak ? 10 : nil)
        var packets: [MediaPacket] = []
        for i in 0..<segment.shippedPackets(runOut) {
            let key = i == 0
            let pts: Int64? = tweak && i == 2 ? nil : Int64(first + i) * 3003 + 6006
            packets.append(MediaPacket(pts: pts, dts: Int64(first + i) * 3003, duration: 3003,
                                       flags: key ? MediaPacket.keyFlag : (i == 3 && tweak ? MediaPacket.discardFlag : 0),
                                       data: [0, 0, 0, 1, key ? 0x65 : 0x41] + Array(repeating: UInt8(truncatingIfNeeded: i * 37), count: 8 + i)))
        }
        return SegmentTask(jobID: job, segment: segment, timeBase: Rational(1, 90000), codec: codec, output: output,
                           settings: settings, runOut: runOut, leadIn: leadIn, packets: packets)
    }

    static func result(index: Int, frames: Int, extradata: [UInt8]) -> EncodedSegment {
        let packets = (0..<frames).map { i in
            MediaPacket(pts: Int64(index * 48 + i) * 512 + 1024, dts: Int64(index * 48 + i) * 512, duration: 512,
                        flags: i == 0 ? MediaPacket.keyFlag : 0,
                        data: [0, 0, 0, 9, i == 0 ? 0x65 : 0x41] + Array(repeating: UInt8(i), count: 4 + 2 * i))
        }
        return EncodedSegment(jobID: job, index: index, timeBase: Rational(1, 15360), extradata: extradata,
                              frameCount: frames, decodedFrames: frames + 2, encodeSeconds: 0.8125, packets: packets)
    }

    static func main() throws {
        let root = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "fuzz/corpus")
        func write(_ harness: String, _ name: String, _ bytes: [UInt8]) throws {
            let dir = root.appendingPathComponent(harness)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(bytes).write(to: dir.appendingPathComponent("seed-" + name))
            print("\(harness)/seed-\(name): \(bytes.count) bytes")
        }
        let sps: [UInt8] = [0x01, 0x64, 0x00, 0x1f, 0xff, 0xe1, 0x00, 0x04, 0x67, 0x64, 0x00, 0x1f, 0x01, 0x00, 0x02, 0x68, 0xee]
        let plainTask = task(index: 0, runOut: nil, leadIn: nil, tweak: false)
        let runOutTask = task(index: 2, runOut: RunOut(packets: 2, endPTS: 102 * 3003), leadIn: 12, tweak: true)
        let oneFrame = result(index: 0, frames: 1, extradata: [])
        let threeFrames = result(index: 2, frames: 3, extradata: sps)
        let ref = ClusterMessage.SegmentRef(jobID: job, index: 2)
        // A ladder's: two rungs, a packaging cut inside the segment; its result holds both rungs.
        var ladderTask = task(index: 1, runOut: nil, leadIn: nil, tweak: false)
        var small = ladderTask.header.output
        small.width = 640
        small.height = 360
        var capped = ladderTask.header.settings
        capped.maxrate = 1_000_000
        capped.bufsize = 2_000_000
        ladderTask.header.rungs = [.init(output: ladderTask.header.output, settings: ladderTask.header.settings),
                                   .init(output: small, settings: capped)]
        ladderTask.header.forcedKeyframes = [ladderTask.header.segment.startPTS + 2 * 3003]
        var ladderResult = result(index: 1, frames: 2, extradata: sps)
        let rungHeaders = [sps, Array(sps.dropLast(2))]
        ladderResult.header.rungs = rungHeaders.map { EncodedSegment.RungHeaders(extradata: $0) }
        ladderResult.header.extradata = EncodedSegment.RungHeaders.combined(rungHeaders)
        ladderResult.packets += ladderResult.packets

        // Payload blobs, for the harnesses that take a blob whole.
        try write("segment-task", "plain", plainTask.serialized())
        try write("segment-task", "run-out-lead-in", runOutTask.serialized())
        try write("encoded-segment", "one-frame", oneFrame.serialized())
        try write("encoded-segment", "three-frames", threeFrames.serialized())
        try write("segment-task", "ladder", ladderTask.serialized())
        try write("encoded-segment", "ladder", ladderResult.serialized())

        // Worker → coordinator.
        let fromWorker: [(String, ClusterMessage)] = [
            ("ready", .ready(.init(workerID: "worker-a1", host: "encode-07.internal", slots: 2,
                                   capabilities: ["libavcodec": "59.37.100", "libx264": "164", "threads": "2"]))),
            ("ready-in-flight", .ready(.init(workerID: "worker-b2", host: "encode-08", slots: 1, capabilities: [:],
                                             inFlight: [.init(segment: ref, token: token),
                                                        .init(segment: .init(jobID: otherJob, index: 0), token: otherToken)]))),
            ("heartbeat", .heartbeat),
            ("result", {
                let (bytes, checksum) = threeFrames.serializedWithChecksum()
                return .result(.init(segment: ref, attempt: 1, token: token, checksum: checksum), payload: bytes)
            }()),
            ("result-one-frame", {
                let (bytes, checksum) = oneFrame.serializedWithChecksum()
                return .result(.init(segment: .init(jobID: job, index: 0), attempt: 3, token: otherToken, checksum: checksum), payload: bytes)
            }()),
            ("failure", .failure(.init(segment: ref, attempt: 2, token: token, error: "encoder: invalid frame size"))),
            ("bye", .bye(handedBack: [ref, .init(jobID: job, index: 5)])),
        ]
        for (name, message) in fromWorker { try write("coordinator-message", name, FuzzFrames.join(message.frames())) }

        // Coordinator → worker.
        let toWorker: [(String, ClusterMessage)] = [
            ("task", .task(.init(segment: .init(jobID: job, index: 0), attempt: 1, token: otherToken), payload: plainTask.serialized())),
            ("task-run-out", .task(.init(segment: ref, attempt: 2, token: token), payload: runOutTask.serialized())),
            ("cancel", .cancel(jobID: job)),
            ("heartbeat", .heartbeat),
            ("refused", .refused(.init(.wireVersion, "the coordinator speaks wire protocol version 3, this worker 2"))),
        ]
        for (name, message) in toWorker { try write("worker-message", name, FuzzFrames.join(message.frames())) }
    }
}
