/// A stream's codec parameters in plain Swift, enough for a decoder on another machine to open it.
/// Codecs and pixel formats travel by name: FFmpeg's enum values are not a wire format.
public struct CodecParameters: Codable, Hashable, Sendable {
    public var codecName: String
    public var codecTag: UInt32 = 0
    @HexBytes public var extradata: [UInt8] = []
    public var pixelFormat: String?
    public var bitRate: Int64 = 0
    public var bitsPerCodedSample: Int32 = 0
    public var bitsPerRawSample: Int32 = 0
    public var profile: Int32 = -99
    public var level: Int32 = -99
    public var width: Int32 = 0
    public var height: Int32 = 0
    public var sampleAspectRatio = Rational(0, 1)
    public var fieldOrder: Int32 = 0
    public var colorRange: Int32 = 0
    public var colorPrimaries: Int32 = 2
    public var colorTransfer: Int32 = 2
    public var colorSpace: Int32 = 2
    public var chromaLocation: Int32 = 0
    public var videoDelay: Int32 = 0
    // Audio.
    public var sampleFormat: String?
    public var sampleRate: Int32 = 0
    public var channels: Int32 = 0
    public var frameSize: Int32 = 0
    public var initialPadding: Int32 = 0

    public init(codecName: String) { self.codecName = codecName }
}

/// The output video format, frozen for the job at planning time.
public struct VideoOutputFormat: Codable, Hashable, Sendable {
    public var width: Int32
    public var height: Int32
    public var pixelFormat: String
    /// Encoder time base: the source stream's, so every source pts survives unchanged.
    public var timeBase: Rational
    public var frameRate: Rational
    public var sampleAspectRatio: Rational
    public var colorRange: Int32
    public var colorPrimaries: Int32
    public var colorTransfer: Int32
    public var colorSpace: Int32
    public var chromaLocation: Int32
    /// Clockwise quarter turns applied to the pixels after scaling (nil: none).
    public var quarterTurns: Int?
    /// Mirror images applied after the rotation.
    public var mirrorHorizontal: Bool?
    public var mirrorVertical: Bool?
    /// swscale quality (nil: bicubic).
    public var scaler: String?
    /// The colour matrix (AVColorSpace) the source is converted from; nil: no conversion.
    public var convertsFromColorSpace: Int32?
    /// Constant frame rate: each tick of `timeBase` (1/frameRate) shows the source frame on screen then.
    /// Nil or false: the source's timestamps are kept (`timeBase` is the source's).
    public var resamplesFrameRate: Bool?
    /// The source's display matrix, carried when the pixels keep their stored orientation.
    public var displayMatrix: [Int32]?

    public init(width: Int32, height: Int32, pixelFormat: String, timeBase: Rational, frameRate: Rational,
                sampleAspectRatio: Rational, colorRange: Int32, colorPrimaries: Int32, colorTransfer: Int32,
                colorSpace: Int32, chromaLocation: Int32) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.timeBase = timeBase
        self.frameRate = frameRate
        self.sampleAspectRatio = sampleAspectRatio
        self.colorRange = colorRange
        self.colorPrimaries = colorPrimaries
        self.colorTransfer = colorTransfer
        self.colorSpace = colorSpace
        self.chromaLocation = chromaLocation
    }
}

extension VideoOutputFormat {
    /// Width and height the scaler produces: the final size, turned back when a quarter turn follows.
    public var scaledSize: (width: Int32, height: Int32) {
        (quarterTurns ?? 0) % 2 == 1 ? (height, width) : (width, height)
    }

    /// Whether frames pass through a rotation or mirror after scaling.
    public var transformsPicture: Bool {
        (quarterTurns ?? 0) != 0 || mirrorHorizontal == true || mirrorVertical == true
    }
}

extension VideoOutputFormat {
    /// The output timestamps (in `timeBase`) of the source span [start, end) given in `sourceTimeBase`:
    /// the source's own when the frame rate is kept, else every tick of the constant rate in the span.
    /// Adjacent spans give adjacent ranges, so segments planned apart join without a gap or a repeat.
    public func outputTicks(start: Int64, end: Int64, sourceTimeBase: Rational) -> Range<Int64> {
        guard resamplesFrameRate == true else { return start..<end }
        let first = sourceTimeBase.rescaleUp(start, to: timeBase)
        return first..<max(first, sourceTimeBase.rescaleUp(end, to: timeBase))
    }

    /// One frame's duration at `frameRate`, in ticks of `timeBase` (at least one).
    public var frameDuration: Int64 {
        let ticks = timeBase.isValid && frameRate.isValid ? 1 / (timeBase.doubleValue * frameRate.doubleValue) : 1
        return max(1, Int64(ticks.rounded()))
    }
}

extension CodecParameters {
    /// A four-character code as libavformat stores a codec tag (FFmpeg's `MKTAG`, first character lowest).
    public static func tag(_ text: StaticString) -> UInt32 {
        precondition(text.utf8CodeUnitCount == 4, "a four-character code has four characters")
        return text.withUTF8Buffer { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
