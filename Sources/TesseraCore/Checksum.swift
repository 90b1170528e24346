/// FNV-1a, 64 bit: a fast checksum for payloads on the wire and on disk (not a cryptographic hash).
public struct FNV1a64: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var h = value
        for byte in bytes {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        value = h
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The checksum of `bytes` in hex: what the store records and results carry.
    public static func hex(_ bytes: [UInt8]) -> String {
        var hasher = FNV1a64()
        hasher.update(bytes)
        return String(hasher.value, radix: 16)
    }
}

extension [UInt8] {
    /// Lower-case hex, two digits a byte.
    public var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
