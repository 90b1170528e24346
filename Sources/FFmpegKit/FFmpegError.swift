import CFFmpeg
import CTesseraShim
import TesseraCore

/// A failed FFmpeg call: the C error code, FFmpeg's message for it, and the call that failed.
public struct FFmpegError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let call: String
    public let file: String
    public let line: Int

    public init(code: Int32, call: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.call = call
        self.file = file
        self.line = line
        var buffer = [CChar](repeating: 0, count: 256)
        tessera_error_string(code, &buffer, buffer.count)
        message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// An error that is not a failed C call (a missing codec, an unsupported format).
    public init(_ message: String, call: String, file: String = #fileID, line: Int = #line) {
        code = tessera_averror_einval()
        self.message = message
        self.call = call
        self.file = file
        self.line = line
    }

    public var description: String { "\(message) (\(call), code \(code))" }

    /// The data given was not valid for the codec or format (a damaged picture).
    public var isInvalidData: Bool { code == tessera_averror_invaliddata() }
}

/// Every FFmpeg call goes through here: a negative return becomes an `FFmpegError`.
@discardableResult
@inline(__always)
func check(_ result: Int32, _ call: @autoclosure () -> String, file: String = #fileID, line: Int = #line) throws(FFmpegError) -> Int32 {
    if result < 0 { throw FFmpegError(code: result, call: call(), file: file, line: line) }
    return result
}

public enum FFmpeg {
    /// Value of a missing timestamp.
    public static let noPTS: Int64 = tessera_nopts_value()

    /// FFmpeg logs to stderr by default; Tessera reports errors itself, so keep FFmpeg quiet unless asked.
    public static func setLogging(verbose: Bool) {
        tessera_set_log_level(verbose ? tessera_log_level_error() : tessera_log_level_quiet())
    }

    /// The same frames and settings encode to different bytes depending on what earlier allocations in
    /// the process left behind (seen with Debian 12's FFmpeg 5.1 and x264 0.164; valgrind's memcheck does
    /// not flag it, and it shows only now and then: in one CI run of five without this, a worker's IDR
    /// against the test process's, and one encode before and after its heap was dirtied). Pre-filling every
    /// allocation with one byte makes each segment's encode a function of its input alone, whichever process
    /// encodes it and whatever it encoded before. It fills on every malloc and free of the whole process, so
    /// only a process that encodes segments turns it on (the coordinator, moving megabytes of payload per
    /// segment, does not).
    public static let deterministicAllocations: Bool = tessera_malloc_perturb(0x5A) == 1

    /// Whether encodes opened from now on use the CPU's SIMD instructions (libavcodec, libswscale, libx264's
    /// `asm`); off, they run plain C. Process-wide; determinism tests compare the two, which must agree.
    public static var simd: Bool {
        get { simdEnabled.current }
        set {
            simdEnabled.withValue { $0 = newValue }
            tessera_force_cpu_flags(newValue ? -1 : 0)
        }
    }

    private static let simdEnabled = Locked(true)

    /// The CPU's SIMD features as libavutil detects them (its `AV_CPU_FLAG_*` bits): libx264's assembly gives other
    /// bytes than its C, so encodes are compared only between workers with the same features.
    public static var cpuFlags: Int { Int(tessera_cpu_flags()) }

    public static var versions: [String: String] {
        func version(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)" }
        return [
            "libavformat": version(avformat_version()),
            "libavcodec": version(avcodec_version()),
            "libavutil": version(avutil_version()),
            "libswscale": version(swscale_version()),
            "libswresample": version(swresample_version()),
            "libx264": String(tessera_x264_build()),
        ]
    }
}

extension Optional where Wrapped == Int64 {
    var avTimestamp: Int64 { self ?? FFmpeg.noPTS }
}

extension Int64 {
    var optionalTimestamp: Int64? { self == FFmpeg.noPTS ? nil : self }
}

extension AVRational {
    init(_ r: Rational) { self.init(num: r.num, den: r.den) }
    var rational: Rational { Rational(num, den) }
}

func cString(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}
