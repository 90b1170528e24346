/// FNV-1a, 64 bit: the digest of small canonical values (the job settings' hash).
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

    public static func hex(_ bytes: [UInt8]) -> String {
        var hasher = FNV1a64()
        hasher.update(bytes)
        return String(hasher.value, radix: 16)
    }
}

/// XXH64 (seed 0): the checksum of payloads on the wire and on disk (not a cryptographic hash).
/// Four independent lanes of 8 bytes, so it runs at memory speed where FNV-1a's one multiply per
/// byte managed about 1 GB/s: a 1080p source segment is tens of megabytes.
public enum PayloadChecksum {
    static let p1: UInt64 = 11_400_714_785_074_694_791
    static let p2: UInt64 = 14_029_467_366_897_019_727
    static let p3: UInt64 = 1_609_587_929_392_839_161
    static let p4: UInt64 = 9_650_029_242_287_828_579
    static let p5: UInt64 = 2_870_177_450_012_600_261

    @inline(__always) static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always) static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) static func merge(_ acc: UInt64, _ lane: UInt64) -> UInt64 {
        (acc ^ round(0, lane)) &* p1 &+ p4
    }

    public static func value(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var running = Running()
        return running.finish(bytes)
    }

    /// The checksum of a buffer that is written or read front to back, taken as it goes: `advance`
    /// folds in the whole 32-byte stripes up to an offset while those bytes are still in cache, and
    /// `finish` the rest. `value` of the same bytes gives the same result.
    public struct Running {
        var v1 = p1 &+ p2, v2 = p2, v3: UInt64 = 0, v4 = 0 &- p1
        /// Bytes folded in so far, a multiple of 32.
        public private(set) var consumed = 0

        public init() {}

        /// Folds in the stripes of `bytes` (the whole input from its start) that end at or before `end`.
        public mutating func advance(_ bytes: UnsafeRawBufferPointer, to end: Int) {
            precondition(end <= bytes.count)
            @inline(__always) func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            var offset = consumed
            var v1 = v1, v2 = v2, v3 = v3, v4 = v4
            while offset + 32 <= end {
                v1 = round(v1, u64(offset))
                v2 = round(v2, u64(offset + 8))
                v3 = round(v3, u64(offset + 16))
                v4 = round(v4, u64(offset + 24))
                offset += 32
            }
            (self.v1, self.v2, self.v3, self.v4) = (v1, v2, v3, v4)
            consumed = offset
        }

        /// The checksum of all of `bytes` (the whole input from its start).
        public mutating func finish(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
            let count = bytes.count
            advance(bytes, to: count)
            @inline(__always) func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            var offset = consumed
            var h: UInt64
            if count >= 32 {
                h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
                h = merge(merge(merge(merge(h, v1), v2), v3), v4)
            } else {
                h = p5
            }
            h = h &+ UInt64(count)
            while offset + 8 <= count {
                h = rotl(h ^ round(0, u64(offset)), 27) &* p1 &+ p4
                offset += 8
            }
            if offset + 4 <= count {
                let word = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                h = rotl(h ^ (word &* p1), 23) &* p2 &+ p3
                offset += 4
            }
            while offset < count {
                h = rotl(h ^ (UInt64(bytes[offset]) &* p5), 11) &* p1
                offset += 1
            }
            h ^= h >> 33
            h = h &* p2
            h ^= h >> 29
            h = h &* p3
            h ^= h >> 32
            return h
        }
    }

    public static func value(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { value($0) } }

    /// How the store and the result messages write a checksum.
    public static func hex(_ value: UInt64) -> String { String(value, radix: 16) }
}
