import CFFmpeg
import CTesseraShim
import Foundation

/// What a send/receive call gave back.
public enum CodecStatus {
    /// A frame or packet was received.
    case ready
    /// Needs more input (EAGAIN).
    case needsInput
    /// Fully drained.
    case finished
}

/// Owns an AVCodecContext; shared by decoders and encoders. Not thread-safe: confine to one thread.
public class CodecContext {
    let context: UnsafeMutablePointer<AVCodecContext>
    public let codecName: String

    init(codec: UnsafePointer<AVCodec>) throws(FFmpegError) {
        guard let ctx = avcodec_alloc_context3(codec) else { throw FFmpegError(code: tessera_averror_enomem(), call: "avcodec_alloc_context3") }
        context = ctx
        codecName = cString(codec.pointee.name) ?? "unknown"
    }

    /// libx265 and SVT-AV1 set process-wide tables when an encoder opens and closes (x265's CTU-size globals,
    /// SVT-AV1's function tables), so encoders of those two open and close one at a time in a process.
    private static let sharedStateLock = NSLock()
    private var usesSharedState: Bool { codecName == "libx265" || codecName == "libsvtav1" }

    deinit {
        var ctx: UnsafeMutablePointer<AVCodecContext>? = context
        if usesSharedState { Self.sharedStateLock.lock() }
        avcodec_free_context(&ctx)
        if usesSharedState { Self.sharedStateLock.unlock() }
    }

    func open(_ codec: UnsafePointer<AVCodec>, options: [(String, String)]) throws(FFmpegError) {
        var dict: OpaquePointer?
        for (key, value) in options { av_dict_set(&dict, key, value, 0) }
        defer { av_dict_free(&dict) }
        if usesSharedState { Self.sharedStateLock.lock() }
        let opened = avcodec_open2(context, codec, &dict)
        if usesSharedState { Self.sharedStateLock.unlock() }
        try check(opened, "avcodec_open2(\(codecName))")
        if let entry = av_dict_get(dict, "", nil, AV_DICT_IGNORE_SUFFIX) {
            throw FFmpegError("\(codecName) does not take the option '\(String(cString: entry.pointee.key))'", call: "avcodec_open2")
        }
    }

    static func status(_ result: Int32, _ call: String) throws(FFmpegError) -> CodecStatus {
        if result == tessera_averror_eagain() { return .needsInput }
        if result == tessera_averror_eof() { return .finished }
        try check(result, call)
        return .ready
    }

    /// The codec's global headers (SPS/PPS for H.264 in avcC form).
    public var extradata: [UInt8] {
        guard let data = context.pointee.extradata, context.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(context.pointee.extradata_size)))
    }

    /// Copies the codec's parameters to a muxer stream.
    func copyParameters(to par: UnsafeMutablePointer<AVCodecParameters>) throws(FFmpegError) {
        try check(avcodec_parameters_from_context(par, context), "avcodec_parameters_from_context")
    }
}
