import Foundation

extension MSEPlayer.Rung {
    /// The rung an HLS media playlist describes: its `#EXT-X-MAP` init segment and its segment URIs (relative to the
    /// playlist), with the codecs read from the init segment's avcC box, not from any playlist tag.
    package static func hls(_ playlist: String, in folder: URL, name: String? = nil) throws -> Self {
        let text = try String(contentsOf: folder.appendingPathComponent(playlist), encoding: .utf8)
        let directory = (playlist as NSString).deletingLastPathComponent
        let resolve = { (uri: String) in directory.isEmpty ? uri : "\(directory)/\(uri)" }
        var initSegment: String?
        var segments: [String] = []
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
            if line.hasPrefix("#EXT-X-MAP:") {
                guard !line.contains("BYTERANGE"), let start = line.range(of: "URI=\""),
                      let end = line[start.upperBound...].firstIndex(of: "\"") else {
                    throw PlayerError(.playlist, "\(playlist): unsupported map \(line)")
                }
                initSegment = resolve(String(line[start.upperBound..<end]))
            } else if line.hasPrefix("#EXT-X-BYTERANGE") {
                throw PlayerError(.playlist, "\(playlist): byte-range segments are not supported")
            } else if !line.hasPrefix("#") {
                segments.append(resolve(line))
            }
        }
        guard let initSegment else { throw PlayerError(.playlist, "\(playlist): no #EXT-X-MAP init segment") }
        guard !segments.isEmpty else { throw PlayerError(.playlist, "\(playlist): no media segments") }
        let codecs = try MSEPlayer.avcCodecs(initSegment: Array(try Data(contentsOf: folder.appendingPathComponent(initSegment))))
        return .init(name: name ?? directory, mimeType: "video/mp4; codecs=\"\(codecs)\"", initSegment: initSegment, segments: segments)
    }
}

extension MSEPlayer {
    /// The RFC 6381 codecs string of an H.264 init segment: its sample entry type (`avc1`/`avc3`), then profile,
    /// constraint flags and level from the avcC record, in hex (`avc1.64001F`).
    package static func avcCodecs(initSegment bytes: [UInt8]) throws -> String {
        func find(_ fourCC: String) -> Int? {
            let pattern = Array(fourCC.utf8)
            guard bytes.count >= pattern.count else { return nil }
            return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
        }
        // avcC's payload: configurationVersion (1), then AVCProfileIndication, profile_compatibility, AVCLevelIndication.
        guard let box = find("avcC"), box + 8 <= bytes.count, bytes[box + 4] == 1 else {
            throw PlayerError(.playlist, "init segment has no avcC record")
        }
        let entry = find("avc3") != nil && find("avc1") == nil ? "avc3" : "avc1"
        return entry + "." + bytes[(box + 5)...(box + 7)].map { String(format: "%02X", $0) }.joined()
    }
}
