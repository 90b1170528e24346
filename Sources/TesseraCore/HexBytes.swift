/// Bytes that travel in JSON headers as one hex string rather than an array of numbers, which
/// Foundation's decoder reads one number at a time (the SPS/PPS in every result and task). Reads the
/// array form too.
@propertyWrapper
public struct HexBytes: Codable, Hashable, Sendable {
    public var wrappedValue: [UInt8]

    public init(wrappedValue: [UInt8]) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let hex = try? container.decode(String.self) {
            guard let bytes = [UInt8](hex: hex) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an even run of hex digits")
            }
            wrappedValue = bytes
        } else {
            wrappedValue = try container.decode([UInt8].self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue.hexString)
    }
}

extension [UInt8] {
    /// Lower-case hex, two digits a byte.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: count * 2)
        for (i, byte) in enumerated() {
            out[2 * i] = digits[Int(byte >> 4)]
            out[2 * i + 1] = digits[Int(byte & 0x0f)]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a hex string (either case); nil for an odd length or a non-hex character.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = value(utf8[i]), let low = value(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        self = bytes
    }
}
