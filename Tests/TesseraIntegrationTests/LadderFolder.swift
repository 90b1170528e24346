import Foundation
import TesseraTestSupport

/// A ladder's HLS output as its master playlist lists it, read back with the playlist text and ffprobe (an
/// independent reader), never with Tessera's own types.
struct LadderFolder {
    /// An `#EXT-X-STREAM-INF` (or `#EXT-X-I-FRAME-STREAM-INF`) entry: its attributes and the media playlist it names.
    struct Variant {
        var attributes: [String: String]
        var uri: String
    }

    let folder: URL
    let master: String
    let variants: [Variant]
    let iFrameVariants: [Variant]
    /// The `#EXT-X-MEDIA` entries' attributes.
    let media: [[String: String]]

    init(folder: URL, master name: String = "master.m3u8") throws {
        self.folder = folder
        master = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        let lines = master.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        var variants: [Variant] = [], iFrames: [Variant] = [], media: [[String: String]] = []
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("#EXT-X-STREAM-INF:"), index + 1 < lines.count {
                variants.append(Variant(attributes: Self.attributes(line), uri: lines[index + 1]))
            } else if line.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") {
                let attributes = Self.attributes(line)
                iFrames.append(Variant(attributes: attributes, uri: attributes["URI"] ?? ""))
            } else if line.hasPrefix("#EXT-X-MEDIA:") {
                media.append(Self.attributes(line))
            }
        }
        self.variants = variants
        iFrameVariants = iFrames
        self.media = media
    }

    /// A tag's attribute list (`NAME=value,NAME="quoted, value"`), quotes removed.
    static func attributes(_ line: String) -> [String: String] {
        var pairs: [String] = [""], quoted = false
        for character in line.drop(while: { $0 != ":" }).dropFirst() {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted { pairs.append("") } else { pairs[pairs.count - 1].append(character) }
        }
        var result: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "=") else { continue }
            result[String(pair[..<equals])] = pair[pair.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return result
    }

    func path(_ relative: String) -> String { folder.appendingPathComponent(relative).path }

    /// The text of a playlist in the folder.
    func text(_ relative: String) throws -> String { try String(contentsOfFile: path(relative), encoding: .utf8) }

    /// The rung a variant names, as the player harness reads it (codecs from its init segment).
    func rung(_ variant: Variant) throws -> MSEPlayer.Rung {
        try MSEPlayer.Rung.hls(variant.uri, in: folder, name: (variant.uri as NSString).deletingLastPathComponent)
    }

    /// The audio rendition the master names (`#EXT-X-MEDIA:TYPE=AUDIO`).
    func audio() throws -> MSEPlayer.Rung? {
        guard let uri = media.first(where: { $0["TYPE"] == "AUDIO" })?["URI"] else { return nil }
        return try MSEPlayer.Rung.hls(uri, in: folder, name: "audio")
    }
}

/// Facts about media files read by ffprobe and ffmpeg.
enum Probe {
    /// Frames of the first video stream, decoded (an HLS playlist lists its stream again under its program: the first line).
    static func frames(_ input: String) throws -> Int {
        let text = try Tool.ffprobe(["-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", input])
        guard let count = text.split(whereSeparator: \.isNewline).first.flatMap({ Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ", "))) })
        else { throw ToolError("ffprobe frames of \(input): \(text)") }
        return count
    }

    /// Width and height of the first video stream.
    static func size(_ input: String) throws -> (width: Int, height: Int) {
        let text = try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", input])
        let numbers = (text.split(whereSeparator: \.isNewline).first ?? "").split(separator: ",").compactMap { Int($0) }
        guard numbers.count == 2 else { throw ToolError("ffprobe size of \(input): \(text)") }
        return (numbers[0], numbers[1])
    }

    /// The presentation times (seconds, as printed) of the first video stream's keyframes, in decode order.
    static func keyframeTimes(_ input: String) throws -> [String] {
        try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", input])
            .split(whereSeparator: \.isNewline).filter { $0.contains(",K") }.map { String($0.prefix { $0 != "," }) }
    }

    /// From a stream's packets: the earliest presentation time and the latest end (pts + duration), in seconds.
    static func span(_ input: String, stream: String) throws -> (start: Double, end: Double) {
        let rows = try Tool.ffprobe(["-select_streams", stream, "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", input])
            .split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) } }
        let starts = rows.compactMap { $0.first ?? nil }
        let ends = rows.compactMap { row -> Double? in row.count >= 2 ? row[0].flatMap { pts in row[1].map { pts + $0 } } : nil }
        guard let start = starts.min(), let end = ends.max() else { throw ToolError("no \(stream) packets in \(input)") }
        return (start, end)
    }

    /// The earliest presentation time (seconds) of a stream's packets.
    static func start(_ input: String, stream: String) throws -> Double {
        let times = try Tool.ffprobe(["-select_streams", stream, "-show_entries", "packet=pts_time", "-of", "csv=p=0", input])
            .split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: ", "))) }
        guard let first = times.min() else { throw ToolError("no \(stream) packets in \(input)") }
        return first
    }

    /// Per decoded frame of one file: whether it is a keyframe and its picture type, in presentation order.
    static func frameTypes(_ input: String) throws -> [(key: Bool, type: String)] {
        try Tool.ffprobe(["-select_streams", "v:0", "-show_entries", "frame=key_frame,pict_type", "-of", "csv=p=0", input])
            .split(whereSeparator: \.isNewline).map { line in
                let fields = line.split(separator: ",").map(String.init)
                return (fields.first == "1", fields.count > 1 ? fields[1] : "")
            }
    }

    /// An init segment and one media segment joined into one file, as a player appends them.
    static func joined(_ folder: URL, _ rung: MSEPlayer.Rung, segment: Int) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-ladder-\(UUID().uuidString.prefix(8)).mp4")
        try (Data(contentsOf: folder.appendingPathComponent(rung.initSegment)) + Data(contentsOf: folder.appendingPathComponent(rung.segments[segment])))
            .write(to: file)
        return file
    }

    /// Checks that `output` holds the source's frames, each in its place: as many frames, timestamps that keep the
    /// source's spacing, and every output frame closer (luma MSE, at the output's size) to its own source frame than
    /// to the source frames either side of it, which a dropped, repeated or shifted frame breaks at any quality.
    /// Returns the problems found (empty: frame-exact) and the mean PSNR against the source.
    static func frameExactness(source: String, output: String) throws -> (problems: [String], meanPSNR: Double) {
        let (width, height) = try size(output)
        let a = try FrameCheck.luma(source, width: width, height: height)
        let b = try FrameCheck.luma(output, width: width, height: height)
        let frameSize = width * height
        let sourceFrames = a.count / frameSize, outputFrames = b.count / frameSize
        var problems: [String] = []
        if sourceFrames != outputFrames { problems.append("\(outputFrames) frames, the source has \(sourceFrames)") }
        func mse(_ i: Int, _ j: Int) -> Double {
            a.withUnsafeBufferPointer { pa in
                b.withUnsafeBufferPointer { pb in
                    var sum = 0
                    let sa = j * frameSize, sb = i * frameSize
                    for k in 0..<frameSize {
                        let d = Int(pa[sa + k]) - Int(pb[sb + k])
                        sum += d * d
                    }
                    return Double(sum) / Double(frameSize)
                }
            }
        }
        let count = min(sourceFrames, outputFrames)
        var psnrSum = 0.0
        for i in 0..<count {
            let own = mse(i, i)
            psnrSum += own == 0 ? 99 : 10 * log10(255 * 255 / own)
            for neighbour in [i - 1, i + 1] where neighbour >= 0 && neighbour < sourceFrames {
                let other = mse(i, neighbour)
                if other <= own { problems.append("frame \(i) is closer to source frame \(neighbour) (MSE \(other)) than to its own (\(own))") }
            }
        }
        let ta = try FrameCheck.timestamps(source), tb = try FrameCheck.timestamps(output)
        if let drift = FrameCheck.drift(ta, tb) {
            if drift > 0.002 { problems.append("timestamps drift by \(drift) s from the source's") }
        } else {
            problems.append("\(tb.count) timestamps, the source has \(ta.count)")
        }
        return (problems, psnrSum / Double(max(1, count)))
    }
}
