import Foundation

extension MSEPlayer.Rung {
    /// The rung an HLS media playlist describes: its `#EXT-X-MAP` init segment and its segment URIs (relative to the
    /// playlist), with the codecs read from the init segment (`mimeType(initSegment:)`), not from any playlist tag.
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
        let mimeType = try MSEPlayer.mimeType(initSegment: Array(try Data(contentsOf: folder.appendingPathComponent(initSegment))))
        return .init(name: name ?? directory, mimeType: mimeType, initSegment: initSegment, segments: segments)
    }
}

extension MSEPlayer {
    /// The MIME type with RFC 6381 codecs of an init segment's tracks (`video/mp4; codecs="avc1.64001F,mp4a.40.2"`):
    /// H.264 from the avcC record, AV1 from av1C, AAC from the esds descriptors; `audio/mp4` when it has no video.
    package static func mimeType(initSegment bytes: [UInt8]) throws -> String {
        let video = try avcCodecs(initSegment: bytes) ?? av1Codecs(initSegment: bytes), audio = try aacCodecs(initSegment: bytes)
        guard video != nil || audio != nil else { throw PlayerError(.playlist, "init segment has neither avcC, av1C nor esds") }
        return "\(video == nil ? "audio" : "video")/mp4; codecs=\"\([video, audio].compactMap { $0 }.joined(separator: ","))\""
    }

    /// Where `fourCC` first occurs in `bytes`.
    static func find(_ fourCC: String, in bytes: [UInt8]) -> Int? {
        let pattern = Array(fourCC.utf8)
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    /// `avc1.PPCCLL`: the sample entry type (`avc1`/`avc3`), then profile, constraint flags and level from avcC, in hex.
    static func avcCodecs(initSegment bytes: [UInt8]) throws -> String? {
        guard let box = find("avcC", in: bytes) else { return nil }
        // avcC's payload: configurationVersion (1), then AVCProfileIndication, profile_compatibility, AVCLevelIndication.
        guard box + 8 <= bytes.count, bytes[box + 4] == 1 else { throw PlayerError(.playlist, "init segment has a malformed avcC") }
        let entry = find("avc3", in: bytes) != nil && find("avc1", in: bytes) == nil ? "avc3" : "avc1"
        return entry + "." + bytes[(box + 5)...(box + 7)].map { String(format: "%02X", $0) }.joined()
    }

    /// `av01.P.LLT.DD`: seq_profile, seq_level_idx_0 and seq_tier_0, and the bit depth from av1C's fixed bytes.
    static func av1Codecs(initSegment bytes: [UInt8]) throws -> String? {
        guard let box = find("av1C", in: bytes) else { return nil }
        guard box + 7 <= bytes.count, bytes[box + 4] == 0x81 else { throw PlayerError(.playlist, "init segment has a malformed av1C") }
        let fields = bytes[box + 5], flags = bytes[box + 6]
        let depth = flags & 0x40 == 0 ? 8 : flags & 0x20 != 0 ? 12 : 10
        return String(format: "av01.%d.%02d%@.%02d", fields >> 5, fields & 0x1F, flags & 0x80 != 0 ? "H" : "M", depth)
    }

    /// `mp4a.OO.A`: the object type indication of esds's DecoderConfigDescriptor (hex) and the audio object type of its
    /// AudioSpecificConfig (decimal), ISO 14496-1 and 14496-3.
    static func aacCodecs(initSegment bytes: [UInt8]) throws -> String? {
        guard let box = find("esds", in: bytes) else { return nil }
        var at = box + 8 // past the type, version and flags
        let malformed = PlayerError(.playlist, "init segment has a malformed esds")
        func descriptor(_ tag: UInt8) throws {
            guard at < bytes.count, bytes[at] == tag else { throw malformed }
            at += 1
            for _ in 0..<4 { // the size: up to four bytes of 7 bits, high bit set when more follow
                guard at < bytes.count else { throw malformed }
                at += 1
                if bytes[at - 1] & 0x80 == 0 { break }
            }
        }
        try descriptor(0x03) // ES_Descriptor: ES_ID (2), flags (1), then what the flags announce
        guard at + 3 <= bytes.count else { throw malformed }
        let flags = bytes[at + 2]
        at += 3
        if flags & 0x80 != 0 { at += 2 }
        if flags & 0x40 != 0, at < bytes.count { at += 1 + Int(bytes[at]) }
        if flags & 0x20 != 0 { at += 2 }
        try descriptor(0x04) // DecoderConfigDescriptor: objectTypeIndication, then 12 bytes of stream type, buffer, rates
        guard at + 13 <= bytes.count else { throw malformed }
        let objectType = bytes[at]
        at += 13
        try descriptor(0x05) // DecoderSpecificInfo: AudioSpecificConfig, audioObjectType in the first 5 bits (31: escape)
        guard at + 2 <= bytes.count else { throw malformed }
        var audioObjectType = Int(bytes[at] >> 3)
        if audioObjectType == 31 { audioObjectType = 32 + Int((bytes[at] & 0x07) << 3 | bytes[at + 1] >> 5) }
        return String(format: "mp4a.%02x.%d", objectType, audioObjectType)
    }
}
