/// The header a Matroska (or WebM) block puts before its frame: the track number as an EBML variable-size
/// integer, a 16-bit relative timecode and a flags byte. A demuxer reports a block's packet at the header's
/// first byte; the frame's bytes follow it whole unless the block is laced (several frames in one block).
public struct MatroskaBlockHeader: PacketHeader {
    /// The track number the header names.
    public var track: UInt64
    /// The header's length in bytes: the track number's, plus three.
    public var length: Int

    /// Bytes read before a block's header to check its element: the element's ID (one byte: SimpleBlock 0xA3,
    /// Block 0xA1) and its size (an EBML integer of 1 to 8 bytes).
    public static let elementBytes = 9

    public var bytesBefore: Int { Self.elementBytes + length }
    /// The demuxer puts a block's packet at its header's first byte.
    public var dataOffset: Int { length }

    public init(track: UInt64, length: Int) {
        self.track = track
        self.length = length
    }

    /// The header at the start of `bytes`; nil when there is none, or when its block is laced (its frames
    /// are not whole after it).
    public init?(_ bytes: some Collection<UInt8>) {
        guard let first = bytes.first, first != 0 else { return nil }
        let size = first.leadingZeroBitCount + 1
        guard bytes.count >= size + 3 else { return nil }
        var track = UInt64(first & (0xFF >> size))
        for byte in bytes.dropFirst().prefix(size - 1) { track = track << 8 | UInt64(byte) }
        let flags = bytes[bytes.index(bytes.startIndex, offsetBy: size + 2)]
        guard flags & 0x06 == 0 else { return nil }
        self.init(track: track, length: size + 3)
    }

    /// The frame in `bytes` (the `elementBytes` before a block's header, the header, and `size` bytes): nil unless
    /// the header is this one and a SimpleBlock or Block element of exactly the header and `size` bytes ends
    /// right before it, so that the frame fills its block.
    public func frame(in bytes: ArraySlice<UInt8>, size: Int) -> ArraySlice<UInt8>? {
        let start = bytes.startIndex + Self.elementBytes
        guard bytes.count == Self.elementBytes + length + size, Self(bytes[start..<(start + length)]) == self else { return nil }
        let element = bytes[bytes.startIndex..<start]
        for sizeLength in 1...8 {
            let id = start - sizeLength - 1
            guard element[id] == 0xA3 || element[id] == 0xA1 else { continue }
            let first = element[id + 1]
            guard first.leadingZeroBitCount + 1 == sizeLength else { continue }
            var value = UInt64(first & (0xFF >> sizeLength))
            for byte in element[(id + 2)..<start] { value = value << 8 | UInt64(byte) }
            if value == UInt64(length + size) { return bytes[(start + length)...] }
        }
        return nil
    }
}
