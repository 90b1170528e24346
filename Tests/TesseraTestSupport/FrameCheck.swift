import Foundation

/// Compares an output with its source as ffmpeg decodes them (an independent reader): frame counts,
/// per-frame PSNR of the luma plane in order, and presentation timestamps relative to the first frame.
package struct FrameCheck {
    /// A frame shifted by one in this test pattern scores under 28 dB; a correct one over 38 dB.
    package static let psnrFloor = 33.0

    package var sourceFrames: Int
    package var outputFrames: Int
    package var minimumPSNR: Double
    package var meanPSNR: Double
    /// Largest difference between corresponding frames' timestamps (each relative to its own first frame).
    package var maximumTimestampDrift: Double

    package static func compare(source: String, output: String, width: Int, height: Int) throws -> FrameCheck {
        let a = try luma(source, width: width, height: height)
        let b = try luma(output, width: width, height: height)
        let frameSize = width * height
        let count = min(a.count, b.count) / frameSize
        var psnrs: [Double] = []
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                for f in 0..<count {
                    var sum = 0
                    let base = f * frameSize
                    for i in base..<(base + frameSize) {
                        let d = Int(pa[i]) - Int(pb[i])
                        sum += d * d
                    }
                    let mse = Double(sum) / Double(frameSize)
                    psnrs.append(mse == 0 ? 99 : 10 * log10(255 * 255 / mse))
                }
            }
        }
        let drift = Self.drift(try timestamps(source), try timestamps(output)) ?? .infinity
        return FrameCheck(sourceFrames: a.count / frameSize, outputFrames: b.count / frameSize,
                          minimumPSNR: psnrs.min() ?? 0, meanPSNR: psnrs.reduce(0, +) / Double(max(1, psnrs.count)),
                          maximumTimestampDrift: drift)
    }

    /// Every decoded frame, no frame-rate conversion, as 8-bit luma.
    package static func luma(_ path: String, width: Int, height: Int) throws -> [UInt8] {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-luma-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: raw) }
        try Tool.ffmpeg(["-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-vf", "scale=\(width):\(height)",
                         "-pix_fmt", "gray", "-f", "rawvideo", raw.path])
        return [UInt8](try Data(contentsOf: raw))
    }

    /// The largest difference between corresponding frames' times, each relative to its own first frame; nil when
    /// the counts differ or a first frame has no time. ffprobe cannot time a picture it flushes without a pts (AVI's
    /// last B-frames): such a frame is not compared.
    package static func drift(_ a: [Double?], _ b: [Double?]) -> Double? {
        guard a.count == b.count, let a0 = a.first ?? nil, let b0 = b.first ?? nil else { return nil }
        var drift = 0.0
        for case let (x?, y?) in zip(a, b) { drift = max(drift, abs((x - a0) - (y - b0))) }
        return drift
    }

    /// Each frame's time as ffprobe gives it; nil where it gives none.
    package static func timestamps(_ path: String) throws -> [Double?] {
        try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time", "-of", "csv=p=0", path])
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ", ")) }
            .filter { !$0.isEmpty }
            .map { Double($0) }
    }
}

/// What ffprobe says about a finished output.
package struct OutputFacts {
    package var codecs: [String]
    package var topLevelBoxes: [String]
    package var decodeErrors: String
    package var videoStart: Double
    package var audioStart: Double?
    package var videoDuration: Double
    package var audioDuration: Double?
    package var countedFrames: Int

    package static func read(_ path: String) throws -> OutputFacts {
        let streams = try Tool.ffprobe(["-count_frames", "-show_entries", "stream=codec_type,codec_name,start_time,duration,nb_read_frames",
                                        "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: Data(streams.utf8)) as! [String: Any]
        let list = json["streams"] as! [[String: Any]]
        func double(_ s: [String: Any], _ key: String) -> Double? { (s[key] as? String).flatMap(Double.init) }
        let video = list.first { $0["codec_type"] as? String == "video" }!
        let audio = list.first { $0["codec_type"] as? String == "audio" }
        let trace = try Tool.run("ffprobe", ["-v", "trace", path]).stderr
        let boxes = trace.split(whereSeparator: \.isNewline).compactMap { line -> String? in
            guard line.contains("parent:'root'"), let start = line.range(of: "type:'") else { return nil }
            return String(line[start.upperBound...].prefix(4))
        }
        let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        return OutputFacts(
            codecs: list.compactMap { $0["codec_name"] as? String },
            topLevelBoxes: boxes,
            decodeErrors: decode.stderr + (decode.status == 0 ? "" : "exit \(decode.status)"),
            videoStart: double(video, "start_time") ?? .nan,
            audioStart: audio.flatMap { double($0, "start_time") },
            videoDuration: double(video, "duration") ?? .nan,
            audioDuration: audio.flatMap { double($0, "duration") },
            countedFrames: Int(video["nb_read_frames"] as? String ?? "") ?? -1)
    }

    package var moovBeforeMdat: Bool {
        guard let moov = topLevelBoxes.firstIndex(of: "moov"), let mdat = topLevelBoxes.firstIndex(of: "mdat") else { return false }
        return moov < mdat
    }
}
