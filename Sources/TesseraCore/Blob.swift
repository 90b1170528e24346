/// The framing shared by every payload: a 4-byte magic, a format version, a JSON header, packet records
/// with exact pts/dts/duration/flags, and an FNV-1a checksum of everything before it.
///
///     magic[4] version:u16 headerLength:u32 header[headerLength]
///     packetCount:u32 { pts:i64 dts:i64 duration:i64 flags:u32 size:u32 bytes[size] }*
///     checksum:u64
///
/// Integers are little-endian; a missing timestamp is Int64.min (FFmpeg's AV_NOPTS_VALUE).
public enum Blob {
    public static let currentVersion: UInt16 = 1

    public static func encode(magic: String, header: [UInt8], packets: [MediaPacket]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(header.count + packets.reduce(64) { $0 + $1.data.count + 32 })
        out.append(contentsOf: Array(magic.utf8.prefix(4)))
        out.appendLE(currentVersion)
        out.appendLE(UInt32(header.count))
        out.append(contentsOf: header)
        out.appendLE(UInt32(packets.count))
        for p in packets {
            out.appendLE(UInt64(bitPattern: p.pts ?? Int64.min))
            out.appendLE(UInt64(bitPattern: p.dts ?? Int64.min))
            out.appendLE(UInt64(bitPattern: p.duration))
            out.appendLE(p.flags)
            out.appendLE(UInt32(p.data.count))
            out.append(contentsOf: p.data)
        }
        var hasher = FNV1a64()
        hasher.update(out)
        out.appendLE(hasher.value)
        return out
    }

    public static func decode(magic: String, _ bytes: [UInt8]) throws(PayloadError) -> (header: [UInt8], packets: [MediaPacket]) {
        guard bytes.count >= 4 + 2 + 4 + 4 + 8 else { throw .truncated }
        guard Array(bytes[0..<4]) == Array(magic.utf8) else { throw .wrongMagic(expected: magic) }
        var reader = ByteReader(bytes, end: bytes.count - 8)
        let checksum = bytes.withUnsafeBytes { raw in
            var hasher = FNV1a64()
            hasher.update(UnsafeRawBufferPointer(rebasing: raw[0..<(bytes.count - 8)]))
            return hasher.value
        }
        var trailer = ByteReader(bytes, start: bytes.count - 8)
        guard try trailer.u64() == checksum else { throw .checksumMismatch }
        reader.offset = 4
        let version = try reader.u16()
        guard version == currentVersion else { throw .unsupportedVersion(version) }
        let headerLength = Int(try reader.u32())
        let header = try reader.bytes(headerLength)
        let count = Int(try reader.u32())
        // Each record takes at least 32 bytes: a count larger than the bytes left is a lie.
        guard count <= (reader.end - reader.offset) / 32 else { throw .truncated }
        var packets: [MediaPacket] = []
        packets.reserveCapacity(count)
        for _ in 0..<count {
            let pts = Int64(bitPattern: try reader.u64())
            let dts = Int64(bitPattern: try reader.u64())
            let duration = Int64(bitPattern: try reader.u64())
            let flags = try reader.u32()
            let size = Int(try reader.u32())
            let data = try reader.bytes(size)
            packets.append(MediaPacket(pts: pts == Int64.min ? nil : pts, dts: dts == Int64.min ? nil : dts,
                                       duration: duration, flags: flags, data: data))
        }
        guard reader.offset == reader.end else { throw .trailingBytes }
        return (header, packets)
    }
}

public enum PayloadError: Error, Equatable, CustomStringConvertible {
    case truncated
    case wrongMagic(expected: String)
    case unsupportedVersion(UInt16)
    case checksumMismatch
    case trailingBytes
    case badHeader(String)

    public var description: String {
        switch self {
        case .truncated: return "payload is truncated"
        case .wrongMagic(let magic): return "payload is not a \(magic) blob"
        case .unsupportedVersion(let v): return "payload format version \(v) is not supported (this build reads \(Blob.currentVersion))"
        case .checksumMismatch: return "payload checksum does not match (corrupted in transit or on disk)"
        case .trailingBytes: return "payload has bytes after its last packet"
        case .badHeader(let why): return "payload header is malformed: \(why)"
        }
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var offset: Int
    let end: Int

    init(_ bytes: [UInt8], start: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = start
        self.end = end ?? bytes.count
    }

    mutating func bytes(_ n: Int) throws(PayloadError) -> [UInt8] {
        guard n >= 0, offset + n <= end else { throw .truncated }
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(PayloadError) -> T {
        let size = MemoryLayout<T>.size
        guard offset + size <= end else { throw .truncated }
        var value: T = 0
        for i in 0..<size { value |= T(bytes[offset + i]) << (8 * i) }
        offset += size
        return value
    }

    mutating func u16() throws(PayloadError) -> UInt16 { try integer(UInt16.self) }
    mutating func u32() throws(PayloadError) -> UInt32 { try integer(UInt32.self) }
    mutating func u64() throws(PayloadError) -> UInt64 { try integer(UInt64.self) }
}

extension [UInt8] {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        var v = value.littleEndian
        Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
    }
}
