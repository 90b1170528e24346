import CFFmpeg
import TesseraCore

/// Owns one AVPacket.
public final class Packet {
    let raw: UnsafeMutablePointer<AVPacket>

    public init() {
        guard let p = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        raw = p
    }

    /// A packet holding a copy of `media`'s bytes and timestamps.
    public convenience init(_ media: MediaPacket) throws(FFmpegError) {
        self.init()
        try check(av_new_packet(raw, Int32(media.data.count)), "av_new_packet")
        if !media.data.isEmpty {
            media.data.withUnsafeBytes { src in
                raw.pointee.data.update(from: src.bindMemory(to: UInt8.self).baseAddress!, count: media.data.count)
            }
        }
        raw.pointee.pts = media.pts.avTimestamp
        raw.pointee.dts = media.dts.avTimestamp
        raw.pointee.duration = media.duration
        raw.pointee.flags = (media.isKey ? AV_PKT_FLAG_KEY : 0) | (media.isDiscard ? AV_PKT_FLAG_DISCARD : 0)
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = raw
        av_packet_free(&p)
    }

    public var pts: Int64? {
        get { raw.pointee.pts.optionalTimestamp }
        set { raw.pointee.pts = newValue.avTimestamp }
    }
    public var dts: Int64? {
        get { raw.pointee.dts.optionalTimestamp }
        set { raw.pointee.dts = newValue.avTimestamp }
    }
    public var duration: Int64 {
        get { raw.pointee.duration }
        set { raw.pointee.duration = newValue }
    }
    public var streamIndex: Int {
        get { Int(raw.pointee.stream_index) }
        set { raw.pointee.stream_index = Int32(newValue) }
    }
    public var size: Int { Int(raw.pointee.size) }
    /// Where the packet's bytes start in the input file, when the demuxer knows.
    public var position: Int64? { raw.pointee.pos >= 0 ? raw.pointee.pos : nil }
    public var isKey: Bool { raw.pointee.flags & AV_PKT_FLAG_KEY != 0 }
    public var isDiscard: Bool { raw.pointee.flags & AV_PKT_FLAG_DISCARD != 0 }
    public var isCorrupt: Bool { raw.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 }

    /// The packet's bytes, valid only inside `body`.
    public func withData<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let data = raw.pointee.data, raw.pointee.size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: data, count: Int(raw.pointee.size)))
    }

    /// A self-contained copy for a payload.
    public var mediaPacket: MediaPacket {
        MediaPacket(pts: pts, dts: dts, duration: duration, flags: mediaFlags, data: withData { Array($0) })
    }

    /// The flags a payload records (`MediaPacket.flags`).
    public var mediaFlags: UInt32 {
        MediaPacket.flags(key: isKey, discard: isDiscard)
    }

    public func unref() { av_packet_unref(raw) }
}
