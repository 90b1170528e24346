extension CodecString {
    /// `av01.P.LLT.DD` (AV1 Codec ISO Media File Format Binding, Codecs Parameter String) from an
    /// AV1CodecConfigurationRecord or a sequence header OBU: profile, seq_level_idx of operating point 0 with its
    /// tier (M or H), and the bit depth. The optional colour fields are left out.
    public static func av1(_ configuration: [UInt8]) throws(PackagingError) -> String {
        let header = try AV1SequenceHeader(configuration)
        let level = header.level < 10 ? "0\(header.level)" : String(header.level)
        let depth = header.bitDepth < 10 ? "0\(header.bitDepth)" : String(header.bitDepth)
        return "av01.\(header.profile).\(level)\(header.highTier ? "H" : "M").\(depth)"
    }

    /// The codec string of a video stream in `codec` with the decoder configuration `configuration`.
    public static func video(_ codec: VideoCodec, _ configuration: [UInt8]) throws(PackagingError) -> String {
        switch codec {
        case .h264: try avc(configuration)
        case .hevc: try hevc(configuration)
        case .av1: try av1(configuration)
        }
    }
}

/// What a codec string needs of an AV1 sequence header (AV1 spec 5.5): the profile, operating point 0's level and
/// tier, and the bit depth.
struct AV1SequenceHeader {
    var profile = 0
    var level = 0
    var highTier = false
    var bitDepth = 8

    /// From an av1C record (its fixed fields) or from the first sequence header OBU of `bytes`.
    init(_ bytes: [UInt8]) throws(PackagingError) {
        func invalid(_ problem: String) -> PackagingError { PackagingError(.invalidCodecConfiguration, "AV1 configuration: \(problem)") }
        guard let first = bytes.first else { throw invalid("empty") }
        if first == 0x81 {
            guard bytes.count >= 4 else { throw invalid("av1C record of \(bytes.count) bytes") }
            profile = Int(bytes[1] >> 5)
            level = Int(bytes[1] & 0x1F)
            highTier = bytes[2] & 0x80 != 0
            bitDepth = bytes[2] & 0x40 == 0 ? 8 : bytes[2] & 0x20 != 0 ? 12 : 10
            return
        }
        guard let payload = Self.sequenceHeaderOBU(bytes) else { throw invalid("neither an av1C record nor a sequence header OBU") }
        guard parse(payload) else { throw invalid("sequence header of \(payload.count) bytes ends early") }
    }

    /// The payload of the first OBU of type 1 (sequence header).
    static func sequenceHeaderOBU(_ bytes: [UInt8]) -> [UInt8]? {
        var offset = 0
        while offset < bytes.count {
            let header = bytes[offset]
            var position = offset + 1 + (header & 0x4 != 0 ? 1 : 0)
            var size = bytes.count - position
            if header & 0x2 != 0 {
                var value = 0, length = 0
                while length < 8, position + length < bytes.count {
                    let byte = bytes[position + length]
                    value |= Int(byte & 0x7F) << (7 * length)
                    length += 1
                    if byte & 0x80 == 0 { break }
                }
                size = value
                position += length
            }
            guard position + size <= bytes.count else { return nil }
            if (header >> 3) & 0xF == 1 { return Array(bytes[position..<(position + size)]) }
            offset = position + size
        }
        return nil
    }

    /// Reads sequence_header_obu up to color_config's bit depth; false when the bytes end first.
    private mutating func parse(_ payload: [UInt8]) -> Bool {
        var r = BitReader(payload)
        guard let profile = r.read(3), r.read(1) != nil, let reduced = r.read(1) else { return false }
        self.profile = profile
        var orderHint = false
        if reduced == 1 {
            guard let level = r.read(5) else { return false }
            self.level = level
        } else {
            guard let timing = r.read(1) else { return false }
            var decoderModel = 0, delayLength = 0
            if timing == 1 {
                guard r.read(32) != nil, r.read(32) != nil, let equal = r.read(1) else { return false }
                if equal == 1 {
                    // num_ticks_per_picture_minus_1 as uvlc: leading zeros, a one, as many bits again.
                    var zeros = 0
                    while let bit = r.read(1), bit == 0 { zeros += 1; if zeros > 32 { return false } }
                    if zeros > 0, r.read(zeros) == nil { return false }
                }
                guard let model = r.read(1) else { return false }
                decoderModel = model
                if model == 1 {
                    guard let length = r.read(5), r.read(32) != nil, r.read(5) != nil, r.read(5) != nil else { return false }
                    delayLength = length + 1
                }
            }
            guard let displayDelay = r.read(1), let points = r.read(5) else { return false }
            for point in 0...points {
                guard r.read(12) != nil, let level = r.read(5) else { return false }
                var tier = 0
                if level > 7 { guard let t = r.read(1) else { return false }; tier = t }
                if point == 0 { self.level = level; highTier = tier == 1 }
                if decoderModel == 1 {
                    guard let present = r.read(1) else { return false }
                    if present == 1, r.read(2 * delayLength + 1) == nil { return false }
                }
                if displayDelay == 1 {
                    guard let present = r.read(1) else { return false }
                    if present == 1, r.read(4) == nil { return false }
                }
            }
        }
        guard let widthBits = r.read(4), let heightBits = r.read(4), r.read(widthBits + 1) != nil, r.read(heightBits + 1) != nil else { return false }
        if reduced == 0 {
            guard let frameIDs = r.read(1) else { return false }
            if frameIDs == 1, r.read(7) == nil { return false }
        }
        // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter.
        guard r.read(3) != nil else { return false }
        if reduced == 0 {
            // interintra, masked compound, warped motion, dual filter, then enable_order_hint.
            guard r.read(4) != nil, let hint = r.read(1) else { return false }
            orderHint = hint == 1
            if orderHint, r.read(2) == nil { return false }
            guard let choose = r.read(1) else { return false }
            var forceScreenContent = 2
            if choose == 0 { guard let force = r.read(1) else { return false }; forceScreenContent = force }
            if forceScreenContent > 0 {
                guard let chooseMV = r.read(1) else { return false }
                if chooseMV == 0, r.read(1) == nil { return false }
            }
            if orderHint, r.read(3) == nil { return false }
        }
        // enable_superres, enable_cdef, enable_restoration, then color_config's high_bitdepth (and twelve_bit).
        guard r.read(3) != nil, let high = r.read(1) else { return false }
        if profile == 2, high == 1 {
            guard let twelve = r.read(1) else { return false }
            bitDepth = twelve == 1 ? 12 : 10
        } else {
            bitDepth = high == 1 ? 10 : 8
        }
        return true
    }
}
