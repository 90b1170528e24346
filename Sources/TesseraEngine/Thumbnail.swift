import FFmpegKit
import Foundation
import TesseraCore

/// A poster frame: one picture of a finished output, as JPEG (libavcodec's mjpeg) or PNG, written to a
/// temporary file beside the target and renamed into place.
public enum Thumbnail {
    public enum Format: String, Sendable {
        case jpeg, png

        /// The encoder and the pixel format it takes (full range; JPEG's matrix is BT.601).
        var codecName: String { self == .jpeg ? "mjpeg" : "png" }
        var pixelFormat: String { self == .jpeg ? "yuvj420p" : "rgb24" }
    }

    /// What was written.
    public struct Picture: Sendable {
        public var path: String
        public var format: Format
        public var width: Int
        public var height: Int
        /// The picture's time in the video, from its first frame.
        public var seconds: Double
        /// Whether the asked-for time was past the end (the last frame was taken).
        public var clamped: Bool
    }

    /// The format a path's extension names: .jpg, .jpeg or .png.
    public static func format(of path: String) throws(TesseraError) -> Format {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        default: throw .output(path, "a thumbnail is JPEG or PNG: name it .jpg, .jpeg or .png")
        }
    }

    /// Everything about the thumbnail path a user can get wrong, checked before any work starts.
    public static func check(_ path: String, notOverwriting others: [String]) throws(TesseraError) {
        _ = try format(of: path)
        if S3Location.isS3(path) {
            guard let location = S3Location(url: path) else { throw .output(path, "name an object: s3://bucket/poster.jpg") }
            if others.contains(path) { throw .output(path, "is the input or the output of this transcode") }
            return try ObjectUpload.checkBucket(location)
        }
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        if others.contains(where: { URL(fileURLWithPath: $0).standardizedFileURL.path == target }) {
            throw .output(path, "is the input or the output of this transcode")
        }
        try OutputPath.checkWritable(path)
    }

    /// Seconds from "12.5", "00:12.5" or "00:00:12.5"; nil when the text is none of those.
    public static func parseTime(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0.0
        for (n, part) in parts.enumerated() {
            let isLast = n == parts.count - 1
            // Hours and minutes are whole numbers; minutes and seconds below 60 when something comes before.
            guard let value = isLast ? Double(part) : Int(part).map(Double.init), value >= 0, value.isFinite,
                  n == 0 || value < 60 else { return nil }
            seconds = seconds * 60 + value
        }
        return seconds
    }

    /// Where the picture is taken when no time is given: 10% into the video.
    public static let defaultFraction = 0.1

    /// Decodes `video`'s main stream at `seconds` (from its first frame; default 10% in, clamped to the
    /// last frame) and writes the frame shown then to `path`.
    ///
    /// Tessera's outputs carry their rotation in the pixels, so they have no display matrix; an output
    /// made with `--rotate none` keeps the source's, and its thumbnail is turned upright here.
    public static func write(from video: String, to path: String, at seconds: Double? = nil) throws(TesseraError) -> Picture {
        let format = try format(of: path)
        func fail(_ problem: String) -> TesseraError { TesseraError(.output, path, problem) }
        do {
            let input = try open(video)
            guard let stream = input.bestVideoStream else { throw fail("\(video) has no video stream") }
            let (frame, chosen) = try decodeFrame(input, stream, at: seconds)
            let picture = try encode(frame, stream: stream, format: format)
            let object = S3Location(url: path)
            let ext = URL(fileURLWithPath: path).pathExtension
            let temporary = object == nil ? OutputPath.temporary(for: path, pathExtension: ext) : OutputPath.uploadStaging(pathExtension: ext)
            guard FileManager.default.createFile(atPath: temporary, contents: Data(picture)) else {
                throw fail("cannot write \(temporary)")
            }
            if let object {
                defer { try? FileManager.default.removeItem(atPath: temporary) }
                try ObjectUpload.upload(temporary, to: object)
            } else {
                try OutputPath.commit(temporary, to: path)
            }
            let size = displaySize(stream)
            return Picture(path: path, format: format, width: size.width, height: size.height, seconds: chosen.seconds,
                           clamped: chosen.clamped)
        } catch let error as TesseraError {
            throw error
        } catch let error as FFmpegError {
            throw fail("cannot make the thumbnail from \(video) (\(error.description))")
        } catch {
            throw fail("\(error)")
        }
    }

    /// The video to take the picture from: a local file or an `s3://` object (an output just put there).
    static func open(_ video: String) throws -> MediaInput {
        guard let location = S3Location(url: video) else { return try MediaInput(path: video) }
        return try InputSource.open(location, try InputSource.head(location))
    }

    /// The frame shown at `seconds`: the last one whose time is at or before it.
    static func decodeFrame(_ input: MediaInput, _ stream: StreamInfo, at seconds: Double?) throws -> (Frame, (seconds: Double, clamped: Bool)) {
        let tb = stream.timeBase
        let start = stream.startTime ?? 0
        let duration = stream.duration.map { tb.seconds($0) } ?? input.durationSeconds ?? 0
        let frameSeconds = stream.averageFrameRate.isValid ? stream.averageFrameRate.inverse.doubleValue : 0.04
        let last = max(0, duration - frameSeconds)
        let wanted = seconds ?? duration * defaultFraction
        let target = start + Int64((min(wanted, last) / tb.doubleValue).rounded())
        if (try? input.seek(stream: stream.index, toOrBefore: target)) == nil { try input.seekToStart() }

        let decoder = try Decoder(input: input, streamIndex: stream.index)
        let packet = Packet()
        var chosen: Frame?
        var spare = Frame()
        // Receives every frame the decoder has; true once a frame past the target shows up.
        func drain() throws -> Bool {
            while try decoder.receive(spare) == .ready {
                if let pts = spare.pts, pts > target {
                    if chosen == nil { chosen = spare }
                    return true
                }
                let previous = chosen ?? Frame()
                chosen = spare
                spare = previous
            }
            return false
        }
        var passed = false
        while !passed, try input.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            _ = try decoder.send(packet)
            passed = try drain()
        }
        if !passed {
            _ = try decoder.send(nil)
            _ = try drain()
        }
        guard let frame = chosen else { throw FFmpegError("no frame could be decoded", call: "Thumbnail.decodeFrame") }
        let shown = frame.pts.map { tb.seconds($0 - start) } ?? 0
        return (frame, (shown, wanted > last + 1e-9))
    }

    /// Frame size as shown: non-square pixels are stretched to square ones (even width).
    static func displaySize(_ stream: StreamInfo) -> (width: Int, height: Int) {
        let sar = stream.parameters.sampleAspectRatio
        guard sar.isValid, sar.num != sar.den else { return (stream.width, stream.height) }
        let width = Int((Double(stream.width) * sar.doubleValue / 2).rounded()) * 2
        return (max(2, width), stream.height)
    }

    static func encode(_ decoded: Frame, stream: StreamInfo, format: Format) throws -> [UInt8] {
        var size = displaySize(stream)
        var frame = decoded
        let turns = PictureSettings(rotate: "auto").quarterTurns(sourceRotation: stream.rotation).turns
        if turns != 0 {
            frame = try PictureTransform(quarterTurns: turns, mirrorHorizontal: false, mirrorVertical: false).apply(decoded)
            if turns % 2 == 1 { size = (size.height, size.width) }
        }
        let scaler = try Scaler(width: Int32(size.width), height: Int32(size.height), pixelFormat: format.pixelFormat,
                                fullRange: true)
        scaler.outputColorSpace = 5 // BT.601: JFIF's matrix, and the one RGB conversion assumes.
        let picture = try scaler.scale(frame)
        picture.pts = 0
        let output = VideoOutputFormat(width: Int32(size.width), height: Int32(size.height), pixelFormat: format.pixelFormat,
                                       timeBase: Rational(1, 1), frameRate: Rational(1, 1), sampleAspectRatio: Rational(1, 1),
                                       colorRange: 2, colorPrimaries: 2, colorTransfer: 2,
                                       colorSpace: format == .jpeg ? 5 : 0, chromaLocation: format == .jpeg ? 2 : 0)
        var config = VideoEncoderConfig(codecName: format.codecName, format: output, gopSize: 0, maxBFrames: 0)
        config.globalHeader = false
        config.closedGOP = false
        // A fixed quantiser (ffmpeg's -q:v 2): mjpeg's rate control has nothing to average over one frame.
        if format == .jpeg { config.options = [("flags", "+qscale"), ("qmin", "2"), ("qmax", "2")] }
        let encoder = try Encoder(video: config)
        _ = try encoder.send(picture)
        _ = try encoder.send(nil)
        let packet = Packet()
        var bytes: [UInt8] = []
        while try encoder.receive(packet) == .ready { bytes += packet.withData { Array($0) } }
        guard !bytes.isEmpty else { throw FFmpegError("\(format.codecName) produced no picture", call: "Thumbnail.encode") }
        return bytes
    }
}
