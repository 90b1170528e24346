/// The framing shared by every payload: a 4-byte magic, a format version, a JSON header, packet records
/// with exact pts/dts/duration/flags, and an XXH64 checksum (`PayloadChecksum`) of everything before it.
///
///     magic[4] version:u16 headerLength:u32 header[headerLength]
///     packetCount:u32 { pts:i64 dts:i64 duration:i64 flags:u32 size:u32 bytes[size] }*
///     checksum:u64
///
/// Integers are little-endian; a missing timestamp is Int64.min (FFmpeg's AV_NOPTS_VALUE). Version 1
/// ended with FNV-1a; a spool file of that version is refused at stitch time and encoded again.
public enum Blob {
    public static let currentVersion: UInt16 = 2
    /// Bytes of a packet record before its data.
    static let recordHead = 8 + 8 + 8 + 4 + 4

    /// A packet record whose `count` bytes `write` puts in place, straight into the blob (copied from a
    /// buffer, or read from a file into it); false from `write` fails the blob.
    public typealias PutRecord = (_ pts: Int64?, _ dts: Int64?, _ duration: Int64, _ flags: UInt32, _ count: Int,
                                  _ write: (UnsafeMutableRawBufferPointer) -> Bool) -> Void

    /// Writes a blob into one allocation: `packets` records holding `dataBytes` bytes in all, which `fill`
    /// puts one at a time, the checksum taken over the written bytes. Nil when `fill` returns false, or
    /// puts other than that many records and bytes. Payloads are written through `BlobPayload.write`.
    public static func encode(magic: String, header: [UInt8], packets: Int, dataBytes: Int,
                              fillInPlace fill: (PutRecord) throws -> Bool) rethrows -> [UInt8]? {
        let magicBytes = Array(magic.utf8.prefix(4))
        let size = magicBytes.count + 2 + 4 + header.count + 4 + packets * recordHead + dataBytes + 8
        var complete = false
        let bytes = try [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var out = ByteWriter(UnsafeMutableRawBufferPointer(buffer))
            out.append(magicBytes)
            out.put(currentVersion)
            out.put(UInt32(header.count))
            out.append(header)
            out.put(UInt32(packets))
            var written = 0, failed = false
            // The checksum is taken record by record, while the bytes just written are still in cache.
            let body = UnsafeRawBufferPointer(rebasing: out.base[0..<(size - 8)])
            var checksum = PayloadChecksum.Running()
            let filled = try fill { pts, dts, duration, flags, count, write in
                guard !failed, written < packets, count >= 0, out.offset + recordHead + count <= size - 8 else {
                    failed = true
                    return
                }
                out.put(UInt64(bitPattern: pts ?? Int64.min))
                out.put(UInt64(bitPattern: dts ?? Int64.min))
                out.put(UInt64(bitPattern: duration))
                out.put(flags)
                out.put(UInt32(count))
                guard write(UnsafeMutableRawBufferPointer(rebasing: out.base[out.offset..<(out.offset + count)])) else {
                    failed = true
                    return
                }
                out.offset += count
                checksum.advance(body, to: out.offset)
                written += 1
            }
            complete = filled && !failed && written == packets && out.offset == size - 8
            if complete { out.put(checksum.finish(body)) }
            initialized = complete ? out.offset : 0
        }
        return complete ? bytes : nil
    }

    /// The header and packets of a blob (checksum, version and every record's framing checked), from
    /// bytes wherever they are (an array, a received message's buffer).
    public static func decode(magic: String, _ bytes: UnsafeRawBufferPointer) throws(PayloadError) -> (header: [UInt8], packets: [MediaPacket]) {
        var packets: [MediaPacket] = []
        let header = try walk(magic: magic, bytes) { count in
            packets.reserveCapacity(count)
        } record: { pts, dts, duration, flags, data in
            packets.append(MediaPacket(pts: pts, dts: dts, duration: duration, flags: flags, data: Array(data)))
        }.header
        return (header, packets)
    }

    /// Checks a blob as `decode` does (checksum, version, every record's framing) without copying its
    /// packets: the coordinator's test of a result it only stores. Returns the header, the number of
    /// packets and the checksum.
    public static func check(magic: String, _ bytes: UnsafeRawBufferPointer) throws(PayloadError) -> (header: [UInt8], packets: Int, checksum: UInt64) {
        var packets = 0
        let (header, checksum) = try walk(magic: magic, bytes, count: { packets = $0 }, record: { _, _, _, _, _ in })
        return (header, packets, checksum)
    }

    /// The checksum a blob carries in its last 8 bytes, unchecked: what the store compares a spool
    /// file's recorded checksum with before the file is decoded (which checks it against the bytes).
    public static func storedChecksum(_ bytes: [UInt8]) -> UInt64? {
        bytes.withUnsafeBytes { storedChecksum($0) }
    }

    static func storedChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count >= 8 else { return nil }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
    }

    static func walk(magic: String, _ raw: UnsafeRawBufferPointer, count: (Int) -> Void,
                     record: (Int64?, Int64?, Int64, UInt32, UnsafeRawBufferPointer) -> Void) throws(PayloadError) -> (header: [UInt8], checksum: UInt64) {
        guard raw.count >= 4 + 2 + 4 + 4 + 8 else { throw .truncated }
        guard Array(raw[0..<4]) == Array(magic.utf8) else { throw .wrongMagic(expected: magic) }
        let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 8)])
        // The checksum is taken record by record as the records are read (each is in cache
        // then); `record` sees bytes not yet checked, so its caller keeps nothing when this throws.
        var running = PayloadChecksum.Running()
        let header: [UInt8]
        do throws(PayloadError) {
            var reader = ByteReader(body, start: 4)
            let version = try reader.u16()
            guard version == currentVersion else { throw .unsupportedVersion(version) }
            header = Array(try reader.bytes(Int(try reader.u32())))
            let packets = Int(try reader.u32())
            // Each record takes at least 32 bytes: a count larger than the bytes left is a lie.
            guard packets <= (body.count - reader.offset) / recordHead else { throw .truncated }
            count(packets)
            for _ in 0..<packets {
                let pts = Int64(bitPattern: try reader.u64())
                let dts = Int64(bitPattern: try reader.u64())
                let duration = Int64(bitPattern: try reader.u64())
                let flags = try reader.u32()
                let data = try reader.bytes(Int(try reader.u32()))
                record(pts == Int64.min ? nil : pts, dts == Int64.min ? nil : dts, duration, flags, data)
                running.advance(body, to: reader.offset)
            }
            guard reader.offset == body.count else { throw .trailingBytes }
        } catch {
            // Damaged bytes are reported as such, whatever framing they broke.
            guard storedChecksum(raw) == running.finish(body) else { throw .checksumMismatch }
            throw error
        }
        let checksum = running.finish(body)
        guard storedChecksum(raw) == checksum else { throw .checksumMismatch }
        return (header, checksum)
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

/// Reads little-endian integers and byte runs from a buffer, refusing to run past its end.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, start: Int = 0) {
        self.bytes = bytes
        self.offset = start
    }

    mutating func bytes(_ n: Int) throws(PayloadError) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= bytes.count - offset else { throw .truncated }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(PayloadError) -> T {
        let size = MemoryLayout<T>.size
        guard size <= bytes.count - offset else { throw .truncated }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    mutating func u16() throws(PayloadError) -> UInt16 { try integer(UInt16.self) }
    mutating func u32() throws(PayloadError) -> UInt32 { try integer(UInt32.self) }
    mutating func u64() throws(PayloadError) -> UInt64 { try integer(UInt64.self) }
}

/// Writes little-endian integers and byte runs into a buffer sized for them beforehand.
struct ByteWriter {
    let base: UnsafeMutableRawBufferPointer
    var offset = 0

    init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }

    mutating func put<T: FixedWidthInteger>(_ value: T) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        UnsafeMutableRawBufferPointer(rebasing: base[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
        offset += bytes.count
    }
}
