/// A compressed packet with its exact timestamps, as it travels inside a payload.
public struct MediaPacket: Hashable, Sendable {
    public static let keyFlag: UInt32 = 1
    /// The demuxer marked the packet's frame to be dropped (MP4 edit lists); the decoder drops it.
    public static let discardFlag: UInt32 = 4

    public var pts: Int64?
    public var dts: Int64?
    public var duration: Int64
    public var flags: UInt32
    public var data: [UInt8]

    public init(pts: Int64?, dts: Int64?, duration: Int64, flags: UInt32, data: [UInt8]) {
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.flags = flags
        self.data = data
    }

    /// The flags of a packet the demuxer marked key and/or discard.
    public static func flags(key: Bool, discard: Bool) -> UInt32 {
        (key ? keyFlag : 0) | (discard ? discardFlag : 0)
    }

    public var isKey: Bool { flags & Self.keyFlag != 0 }
    public var isDiscard: Bool { flags & Self.discardFlag != 0 }
}
