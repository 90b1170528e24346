/// Finds random-access points by reading NAL unit headers, because the demuxer's key flag also marks
/// recovery-point I-frames (H.264) and takes whatever `stss` says (MP4).
public struct RandomAccessClassifier: Sendable {
    public enum Family: Sendable, Equatable {
        case h264
        case hevc
        /// An AV1 output: a shown key frame with its sequence header counts as an IDR.
        case av1
        case intraOnly
        case other
    }

    public let family: Family
    /// NAL length-prefix size for avcC/hvcC streams; nil for Annex B start codes.
    public let nalLengthSize: Int?

    /// - Parameters:
    ///   - codecName: FFmpeg's codec name (`h264`, `hevc`, ...).
    ///   - intraOnly: the codec descriptor says every frame is intra.
    ///   - extradata: the stream's extradata (avcC / hvcC, or Annex B headers, or empty).
    ///   - av1KeyFrames: classify AV1 by its OBUs (for outputs, whose segment starts must be decoder starts);
    ///     otherwise AV1 goes by the demuxer's key flag, as any other codec.
    public init(codecName: String, intraOnly: Bool, extradata: [UInt8], av1KeyFrames: Bool = false) {
        switch codecName {
        case "av1" where av1KeyFrames:
            family = .av1
            nalLengthSize = nil
        case "h264":
            family = .h264
            if extradata.count >= 7, extradata[0] == 1 {
                nalLengthSize = Int(extradata[4] & 3) + 1
            } else {
                nalLengthSize = nil
            }
        case "hevc":
            family = .hevc
            if extradata.count >= 23, extradata[0] == 1 {
                nalLengthSize = Int(extradata[21] & 3) + 1
            } else {
                nalLengthSize = nil
            }
        default:
            family = intraOnly ? .intraOnly : .other
            nalLengthSize = nil
        }
    }

    public func classify(_ data: UnsafeRawBufferPointer, keyFlag: Bool) -> RandomAccess {
        switch family {
        case .intraOnly:
            return .intra
        case .other:
            return keyFlag ? .keyframe : .none
        case .av1:
            return SegmentStart.av1KeyFrameWithSequenceHeader(data) ? .idr : keyFlag ? .keyframe : .none
        case .h264:
            var idr = false, recoverySEI = false, intraSlice = false
            forEachNAL(data) { nal in
                guard let header = nal.first else { return }
                switch header & 0x1F {
                case 5: idr = true
                case 6: if Self.seiHasRecoveryPoint(nal) { recoverySEI = true }
                case 1: if Self.sliceIsIntra(nal) { intraSlice = true }
                default: break
                }
            }
            if idr { return .idr }
            if recoverySEI && intraSlice { return .openGOP }
            return .none
        case .hevc:
            var result = RandomAccess.none
            forEachNAL(data) { nal in
                guard let header = nal.first else { return }
                switch (header >> 1) & 0x3F {
                case 19, 20: result = .idr
                case 16, 17, 18, 21: if result == .none { result = .openGOP }
                default: break
                }
            }
            return result
        }
    }

    /// Calls `body` with each NAL unit (header byte first), for length-prefixed or Annex B data.
    func forEachNAL(_ data: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        let count = data.count
        if let size = nalLengthSize {
            var offset = 0
            while offset + size <= count {
                var length = 0
                for i in 0..<size { length = (length << 8) | Int(data[offset + i]) }
                offset += size
                guard length > 0, offset + length <= count else { return }
                body(UnsafeRawBufferPointer(rebasing: data[offset..<(offset + length)]))
                offset += length
            }
            return
        }
        // Annex B: units start after 00 00 01 (a fourth leading zero belongs to the start code).
        var starts: [Int] = []
        var i = 0
        while i + 2 < count {
            if data[i + 2] > 1 {
                i += 3
            } else if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
                starts.append(i + 3)
                i += 3
            } else {
                i += 1
            }
        }
        for (n, start) in starts.enumerated() {
            var end = n + 1 < starts.count ? starts[n + 1] - 3 : count
            while end > start && data[end - 1] == 0 { end -= 1 }
            if end > start { body(UnsafeRawBufferPointer(rebasing: data[start..<end])) }
        }
    }

    /// The first bytes of a NAL payload with emulation-prevention bytes removed.
    static func rbsp(_ nal: UnsafeRawBufferPointer, skipping headerBytes: Int, limit: Int = 64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(limit)
        var zeros = 0
        var i = headerBytes
        while i < nal.count && out.count < limit {
            let byte = nal[i]
            if zeros >= 2 && byte == 3 {
                zeros = 0
                i += 1
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
            i += 1
        }
        return out
    }

    static func seiHasRecoveryPoint(_ nal: UnsafeRawBufferPointer) -> Bool {
        let payload = rbsp(nal, skipping: 1, limit: 4096)
        var i = 0
        while i < payload.count && payload[i] != 0x80 {
            var type = 0
            while i < payload.count && payload[i] == 0xFF { type += 255; i += 1 }
            guard i < payload.count else { return false }
            type += Int(payload[i]); i += 1
            var size = 0
            while i < payload.count && payload[i] == 0xFF { size += 255; i += 1 }
            guard i < payload.count else { return false }
            size += Int(payload[i]); i += 1
            if type == 6 { return true }
            i += size
        }
        return false
    }

    static func sliceIsIntra(_ nal: UnsafeRawBufferPointer) -> Bool {
        var reader = ExpGolombReader(rbsp(nal, skipping: 1, limit: 16))
        guard reader.readUE() != nil, let sliceType = reader.readUE() else { return false }
        return sliceType % 5 == 2 || sliceType % 5 == 4
    }
}

/// Reads unsigned Exp-Golomb codes from an RBSP.
struct ExpGolombReader {
    let bytes: [UInt8]
    var bit = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func readBit() -> Int? {
        guard bit < bytes.count * 8 else { return nil }
        let value = (bytes[bit >> 3] >> (7 - UInt8(bit & 7))) & 1
        bit += 1
        return Int(value)
    }

    mutating func readUE() -> Int? {
        var zeros = 0
        while true {
            guard let b = readBit() else { return nil }
            if b == 1 { break }
            zeros += 1
            if zeros > 31 { return nil }
        }
        var value = 0
        for _ in 0..<zeros {
            guard let b = readBit() else { return nil }
            value = (value << 1) | b
        }
        return (1 << zeros) - 1 + value
    }
}
