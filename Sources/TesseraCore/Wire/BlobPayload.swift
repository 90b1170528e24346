/// A payload that travels as a blob: a Codable header plus packets, framed by `Blob`.
public protocol BlobPayload: Hashable, Sendable {
    associatedtype Header: Codable, Hashable, Sendable
    static var magic: String { get }
    var header: Header { get }
    var packets: [MediaPacket] { get }
    init(validating header: Header, packets: [MediaPacket]) throws(PayloadError)
}

extension BlobPayload {
    /// Writes a payload of this kind: `header` (the JSON of a `Header`), then `packets` records holding
    /// `dataBytes` bytes in all, which `fill` puts one at a time where they go; nil when `fill` fails or
    /// puts other than announced. Every payload is written here: `serialized()`, and the coordinator's
    /// task payloads straight from the input (`SegmentReader`).
    public static func write(header: [UInt8], packets: Int, dataBytes: Int,
                             fill: (Blob.PutRecord) throws -> Bool) rethrows -> [UInt8]? {
        try Blob.encode(magic: magic, header: header, packets: packets, dataBytes: dataBytes, fillInPlace: fill)
    }

    public func serialized() -> [UInt8] {
        let dataBytes = packets.reduce(0) { $0 + $1.data.count }
        return Self.write(header: CanonicalJSON.data(header), packets: packets.count, dataBytes: dataBytes) { put in
            for p in packets {
                p.data.withUnsafeBytes { data in put(p.pts, p.dts, p.duration, p.flags, data.count) { $0.copyMemory(from: data); return true } }
            }
            return true
        }!
    }

    /// The serialized payload and its checksum, as result messages and the store write it (the
    /// blob's own trailer, so nothing is read twice).
    public func serializedWithChecksum() -> (bytes: [UInt8], checksum: String) {
        let bytes = serialized()
        return (bytes, PayloadChecksum.hex(Blob.storedChecksum(bytes) ?? 0))
    }

    public init(serialized bytes: [UInt8]) throws(PayloadError) {
        let result: Result<Self, PayloadError> = bytes.withUnsafeBytes { raw in
            Result { () throws(PayloadError) in try Self(serializedBytes: raw) }
        }
        self = try result.get()
    }

    /// As `init(serialized:)`, from bytes wherever they are (a received message's buffer, read in place).
    public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(PayloadError) {
        let (headerBytes, packets) = try Blob.decode(magic: Self.magic, bytes)
        try self.init(validating: try Self.decodeHeader(headerBytes), packets: packets)
    }

    static func decodeHeader(_ bytes: [UInt8]) throws(PayloadError) -> Header {
        do {
            return try CanonicalJSON.decode(Header.self, from: bytes)
        } catch {
            throw .badHeader(String(describing: error))
        }
    }
}
