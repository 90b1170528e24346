/// What a random-access point is, decided from the bitstream (never from the demuxer's key flag alone).
public enum RandomAccess: String, Codable, Sendable {
    /// Not a random-access point.
    case none
    /// H.264 IDR or HEVC IDR: closed, nothing after it refers to anything before it.
    case idr
    /// Open-GOP entry: H.264 I-frame with a recovery-point SEI, HEVC CRA or BLA. Leading pictures that
    /// follow it in decode order but show before it need the previous GOP.
    case openGOP = "open-gop"
    /// An intra-only codec's frame (ProRes, MJPEG, ...): every frame stands alone.
    case intra
    /// A key-flagged packet of a codec whose bitstream Tessera does not inspect.
    case keyframe
}

/// One video packet as demuxed, without its bytes: what the planner needs.
public struct PacketInfo: Codable, Hashable, Sendable {
    /// Position in decode (demux) order within the video stream.
    public var index: Int
    /// When the picture shows: the demuxer's, or worked out where it gave none (`ptsInferred`).
    public var pts: Int64?
    public var dts: Int64?
    public var duration: Int64
    /// The demuxer's key flag (`AV_PKT_FLAG_KEY`), which is not the same as random access.
    public var keyFlag: Bool
    /// The demuxer marked it to be discarded (MP4 edit lists).
    public var discard: Bool
    public var size: Int
    public var randomAccess: RandomAccess
    /// Where its bytes start in the file, as the demuxer reported (nil: unknown).
    public var position: Int64?
    /// The demuxer gave no pts; `pts` is the time a decoder shows the picture at (`PresentationTimes`).
    public var ptsInferred = false

    public init(index: Int, pts: Int64?, dts: Int64?, duration: Int64, keyFlag: Bool, discard: Bool,
                size: Int, randomAccess: RandomAccess, position: Int64? = nil) {
        self.index = index
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.keyFlag = keyFlag
        self.discard = discard
        self.size = size
        self.randomAccess = randomAccess
        self.position = position
    }

    /// The pts as the demuxer reads it, to recognise the packet when read again.
    public var demuxedPTS: Int64? { ptsInferred ? nil : pts }

    /// The flags a payload records for it (`MediaPacket.flags`).
    public var mediaFlags: UInt32 {
        MediaPacket.flags(key: keyFlag, discard: discard)
    }
}

extension Array where Element == PacketInfo {
    /// Where to seek to read packet `index`: its decode time, else the nearest earlier packet's (a picture's display
    /// time is later than where it sits in the file), else its display time as demuxed; nil: none the demuxer knows
    /// (read from the start).
    public func seekTime(forPacket index: Int) -> Int64? {
        for i in stride(from: index, through: Swift.max(0, index - 64), by: -1) {
            if let dts = self[i].dts { return dts }
        }
        return self[index].demuxedPTS
    }
}
