/// What a fragmented-MP4 media segment holds, read from its moof (ISO 14496-12 8.8): where each track's samples
/// start, how long they last, and whether the first is a sync sample. The I-frame byte range of an HLS I-frame
/// playlist and the checks of the segment writer come from it.
public struct FragmentLayout: Hashable, Sendable {
    public struct Track: Hashable, Sendable {
        public var trackID: UInt32
        /// `tfdt`'s baseMediaDecodeTime, in the track's media time scale.
        public var baseDecodeTime: UInt64?
        public var sampleCount: Int
        /// Sum of the sample durations, in the track's time scale; nil when a duration is left to `trex`.
        public var duration: Int64?
        /// Byte offset of the first sample's data within the segment, and its size.
        public var firstSampleOffset: Int
        public var firstSampleSize: Int
        /// Whether the first sample's flags say sync (nil when they are left to `trex`).
        public var firstSampleIsSync: Bool?
    }

    /// Byte offset and size of the (first) moof box.
    public var moofOffset: Int
    public var moofSize: Int
    public var tracks: [Track]
    /// Top-level box types in order.
    public var boxes: [String]

    public func track(_ id: UInt32) -> Track? { tracks.first { $0.trackID == id } }

    /// Reads a media segment (optional styp/sidx, then moof and mdat); nil when it is not one this reader
    /// understands (no moof, a truncated box, an absolute base data offset).
    public static func parse(_ bytes: [UInt8]) -> FragmentLayout? {
        var boxes: [String] = []
        var moof: (offset: Int, size: Int)?
        for box in BoxReader.children(of: bytes, in: 0..<bytes.count) ?? [] {
            boxes.append(box.type)
            if box.type == "moof", moof == nil { moof = (box.range.lowerBound, box.range.count) }
        }
        guard let moof, let children = BoxReader.children(of: bytes, in: moof.offset + 8..<moof.offset + moof.size) else { return nil }
        var tracks: [Track] = []
        for traf in children where traf.type == "traf" {
            guard let track = parseTraf(bytes, traf.body, moofOffset: moof.offset) else { return nil }
            tracks.append(track)
        }
        return FragmentLayout(moofOffset: moof.offset, moofSize: moof.size, tracks: tracks, boxes: boxes)
    }

    static func parseTraf(_ bytes: [UInt8], _ range: Range<Int>, moofOffset: Int) -> Track? {
        guard let children = BoxReader.children(of: bytes, in: range) else { return nil }
        guard let tfhd = children.first(where: { $0.type == "tfhd" }), let trun = children.first(where: { $0.type == "trun" }) else { return nil }
        var r = BoxReader(bytes: bytes, range: tfhd.body)
        guard let tfhdFlags = r.fullBoxFlags(), let trackID = r.u32() else { return nil }
        // An absolute base data offset would point into a file this segment is only part of.
        guard tfhdFlags & 0x1 == 0 else { return nil }
        if tfhdFlags & 0x2 != 0 { guard r.u32() != nil else { return nil } }
        let defaultDuration = tfhdFlags & 0x8 != 0 ? r.u32() : nil
        let defaultSize = tfhdFlags & 0x10 != 0 ? r.u32() : nil
        let defaultFlags = tfhdFlags & 0x20 != 0 ? r.u32() : nil

        var baseDecodeTime: UInt64?
        if let tfdt = children.first(where: { $0.type == "tfdt" }) {
            var t = BoxReader(bytes: bytes, range: tfdt.body)
            let version = t.peekVersion()
            _ = t.fullBoxFlags()
            baseDecodeTime = version == 1 ? t.u64() : t.u32().map(UInt64.init)
        }

        var t = BoxReader(bytes: bytes, range: trun.body)
        guard let flags = t.fullBoxFlags(), let count = t.u32() else { return nil }
        var dataOffset = 0
        if flags & 0x1 != 0 {
            guard let value = t.u32() else { return nil }
            dataOffset = Int(Int32(bitPattern: value))
        }
        let firstFlags = flags & 0x4 != 0 ? t.u32() : nil
        var duration: Int64? = 0
        var firstSize: UInt32?
        var firstSampleFlags: UInt32?
        for i in 0..<Int(count) {
            let d = flags & 0x100 != 0 ? t.u32() : defaultDuration
            let size = flags & 0x200 != 0 ? t.u32() : defaultSize
            let sampleFlags = flags & 0x400 != 0 ? t.u32() : defaultFlags
            if flags & 0x800 != 0 { guard t.u32() != nil else { return nil } }
            guard !t.overran else { return nil }
            duration = d.flatMap { d in duration.map { $0 + Int64(d) } }
            if i == 0 {
                firstSize = size
                firstSampleFlags = firstFlags ?? sampleFlags
            }
        }
        guard count > 0, let firstSize else { return nil }
        return Track(trackID: trackID, baseDecodeTime: baseDecodeTime, sampleCount: Int(count), duration: duration,
                     firstSampleOffset: moofOffset + dataOffset, firstSampleSize: Int(firstSize),
                     firstSampleIsSync: firstSampleFlags.map { $0 & 0x0001_0000 == 0 })
    }
}

/// Big-endian reads over a byte range, for box parsing; reading past the range sets `overran`.
struct BoxReader {
    struct Box {
        var type: String
        var range: Range<Int>
        var body: Range<Int>
    }

    let bytes: [UInt8]
    var offset: Int
    let end: Int
    var overran = false

    init(bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        offset = range.lowerBound
        end = min(range.upperBound, bytes.count)
    }

    /// The boxes one after another in `range`; nil when one runs past it.
    static func children(of bytes: [UInt8], in range: Range<Int>) -> [Box]? {
        var boxes: [Box] = []
        var r = BoxReader(bytes: bytes, range: range)
        while r.offset + 8 <= r.end {
            let start = r.offset
            guard let size32 = r.u32(), let type = r.fourCC() else { return nil }
            var size = Int(size32)
            if size32 == 1 {
                guard let large = r.u64(), large <= UInt64(Int.max) else { return nil }
                size = Int(large)
            } else if size32 == 0 {
                size = r.end - start
            }
            guard size >= r.offset - start, start + size <= r.end else { return nil }
            boxes.append(Box(type: type, range: start..<start + size, body: r.offset..<start + size))
            r.offset = start + size
        }
        return r.offset == r.end ? boxes : nil
    }

    mutating func u32() -> UInt32? {
        guard offset + 4 <= end else { overran = true; return nil }
        defer { offset += 4 }
        return bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    mutating func u64() -> UInt64? {
        guard offset + 8 <= end else { overran = true; return nil }
        defer { offset += 8 }
        return bytes[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    mutating func fourCC() -> String? {
        guard offset + 4 <= end else { overran = true; return nil }
        defer { offset += 4 }
        return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    func peekVersion() -> UInt8? { offset < end ? bytes[offset] : nil }

    /// A full box's version and flags; returns the 24-bit flags.
    mutating func fullBoxFlags() -> UInt32? { u32().map { $0 & 0x00FF_FFFF } }
}
