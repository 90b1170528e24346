/// The header a Matroska (or WebM) block puts before its frame: the track number as an EBML variable-size
/// integer, a 16-bit relative timecode and a flags byte. A demuxer reports a block's packet at the header's
/// first byte; the frame's bytes follow it whole unless the block is laced (several frames in one block).
public struct MatroskaBlockHeader: Codable, Hashable, Sendable {
    /// The track number the header names.
    public var track: UInt64
    /// The header's length in bytes: the track number's, plus three.
    public var length: Int

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
}
