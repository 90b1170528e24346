/// The header an AVI chunk puts before its data: a four-character code (the stream's number in two digits, then
/// "dc" for compressed video or "db" for uncompressed) and the data's length, 32-bit little-endian. The avi
/// demuxer reports a video packet at its chunk's data, which is the packet whole.
public struct AVIChunkHeader: PacketHeader {
    /// The stream's number: the code's first two characters.
    public var stream: String

    public var bytesBefore: Int { 8 }
    public var dataOffset: Int { 0 }

    public init(stream: String) {
        self.stream = stream
    }

    /// The header in the first 8 bytes of `bytes`; nil unless it is a video chunk's.
    public init?(_ bytes: some Collection<UInt8>) {
        let code = Array(bytes.prefix(4))
        guard bytes.count >= 8, code[0...1].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              code[2] == 0x64, code[3] == 0x63 || code[3] == 0x62 else { return nil }  // "dc", "db"
        self.init(stream: String(decoding: code[0...1], as: UTF8.self))
    }

    public func frame(in bytes: ArraySlice<UInt8>, size: Int) -> ArraySlice<UInt8>? {
        guard bytes.count == 8 + size, Self(bytes) == self else { return nil }
        let length = bytes.dropFirst(4).prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
        return length == size ? bytes.dropFirst(8) : nil
    }
}

/// What a container puts before each packet's data, read with it and checked, so that a worker reading packets
/// at their positions finds out when one is not what the demuxer made.
public protocol PacketHeader: Codable, Hashable, Sendable {
    /// Bytes read before each packet's data.
    var bytesBefore: Int { get }
    /// From where the demuxer puts a packet to its data: the part of the header it counts as the packet's.
    var dataOffset: Int { get }
    /// The packet in `bytes` (`bytesBefore` bytes, then `size`); nil when the header before it is not one that
    /// holds exactly this packet.
    func frame(in bytes: ArraySlice<UInt8>, size: Int) -> ArraySlice<UInt8>?
}
