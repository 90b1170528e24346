/// The front of an MP4 whose index (moov) sits in room reserved before its media (movenc's `moov_size`), as it will
/// be with exactly the room it needs: measured from a stitch with more room than needed, whose media bytes are the
/// same and only move. The index is the measured one with its chunk offsets moved; an 8-byte `free` box follows
/// it (movenc fills the room it does not use with one, and one needs 8 bytes).
public struct ReservedIndex: Equatable, Sendable {
    /// The room to reserve: the index and its `free` box.
    public let reserve: Int
    /// The file's first bytes, up to its first media byte: ftyp, moov, free and the mdat header.
    public let front: [UInt8]
    /// The whole file's size.
    public let size: Int64

    public var mediaStart: Int { front.count }

    public init(front: [UInt8], reserve: Int, size: Int64) {
        (self.front, self.reserve, self.size) = (front, reserve, size)
    }

    /// - Parameters:
    ///   - measured: the first bytes of the measured file, at least up to its first media byte.
    ///   - size: the measured file's size.
    ///   - reserved: the room it had.
    public init?(measured: [UInt8], size: Int64, reserved: Int) {
        let top = MP4Layout.boxes(in: measured, 0..<measured.count)
        guard top.count >= 2, top[0].type == "ftyp", top[1].type == "moov" else { return nil }
        let ftyp = top[0].size, moov = top[1]
        guard moov.offset == ftyp, moov.size + 8 <= reserved else { return nil }
        // After the reserved room: a `wide` placeholder and the mdat header, or mdat with a 64-bit size.
        let after = MP4Layout.boxes(in: measured, ftyp + reserved..<measured.count)
        guard let mdat = after.first(where: { $0.type == "mdat" }), mdat.offset + mdat.headerSize <= measured.count else { return nil }
        let newReserve = moov.size + 8
        let delta = Int64(newReserve - reserved)
        guard let moved = MP4Layout.movingChunkOffsets(ofMoov: Array(measured[moov.offset..<moov.offset + moov.size]), by: delta) else { return nil }
        reserve = newReserve
        front = Array(measured[0..<ftyp]) + moved + [0, 0, 0, 8] + Array("free".utf8)
            + Array(measured[ftyp + reserved..<mdat.offset + mdat.headerSize])
        self.size = size + delta
    }

    /// Room enough for the index of `samples` samples: movenc's tables take at most about 45 bytes a sample (size,
    /// time, composition offset, sync, dependency, chunk and its offset, each entry at its largest), plus the fixed boxes.
    public static func upperBound(samples: Int) -> Int { (64 << 10) + 48 * samples }
}
