/// A ladder as it lies on disk after segmenting: what the HLS playlists and the DASH manifest are written from.
/// Every number is measured from the files (sizes, tick durations); nothing is estimated.
public struct PackagedPresentation: Codable, Hashable, Sendable {
    /// The video rungs, in the order the master playlist and the manifest list them.
    public var video: [VideoRendition]
    /// AAC as its own rendition group (`#EXT-X-MEDIA:TYPE=AUDIO`, an audio AdaptationSet); nil without audio or
    /// when the audio is muxed into each rung (`VideoRendition.muxedAudio`).
    public var audio: AudioRendition?

    public init(video: [VideoRendition], audio: AudioRendition? = nil) {
        self.video = video
        self.audio = audio
    }
}

/// One rung: an H.264, HEVC or AV1 stream in CMAF segments, an init segment and the media segments in one folder.
public struct VideoRendition: Codable, Hashable, Sendable {
    /// The rung's id (DASH `Representation@id`), e.g. "720p".
    public var name: String
    /// The folder of its files, relative to the manifests; its media playlist is written there too.
    public var directory: String
    public var width: Int
    public var height: Int
    public var frameRate: Rational
    public var sampleAspectRatio: Rational
    /// The decoder configuration CODECS comes from: for H.264 the avcC record or the bare SPS NAL unit, for HEVC the
    /// hvcC record or Annex B VPS/SPS, for AV1 the av1C record or the sequence header OBU.
    public var decoderConfiguration: [UInt8]
    /// The video codec; nil is H.264 (so that stored presentations read as before).
    public var codec: VideoCodec?
    /// The AAC format when each segment carries the audio too (audio per rung), else nil.
    public var muxedAudio: AudioFormat?
    public var track: MediaTrack

    public init(name: String, directory: String? = nil, width: Int, height: Int, frameRate: Rational,
                sampleAspectRatio: Rational = Rational(1, 1), decoderConfiguration: [UInt8], muxedAudio: AudioFormat? = nil,
                track: MediaTrack, codec: VideoCodec = .h264) {
        self.name = name
        self.directory = directory ?? name
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.sampleAspectRatio = sampleAspectRatio
        self.decoderConfiguration = decoderConfiguration
        self.codec = codec == .h264 ? nil : codec
        self.muxedAudio = muxedAudio
        self.track = track
    }
}

extension VideoRendition {
    /// The rung's video codec string (HLS `CODECS`, DASH `codecs`), from its decoder configuration.
    public func codecString() throws(PackagingError) -> String {
        try CodecString.video(codec ?? .h264, decoderConfiguration)
    }
}

/// The AAC rendition that every rung plays with.
public struct AudioRendition: Codable, Hashable, Sendable {
    /// The rendition's label: HLS `NAME`, the DASH `Label`.
    public var name: String
    /// BCP 47 language tag (HLS `LANGUAGE`, DASH `lang`), if known.
    public var language: String?
    public var directory: String
    /// HLS `GROUP-ID`; the DASH Representation's id.
    public var groupID: String
    public var format: AudioFormat
    public var track: MediaTrack

    public init(name: String, language: String? = nil, directory: String = "audio", groupID: String = "audio",
                format: AudioFormat, track: MediaTrack) {
        self.name = name
        self.language = language
        self.directory = directory
        self.groupID = groupID
        self.format = format
        self.track = track
    }
}

/// AAC as the CODECS string and the channel signalling need it.
public struct AudioFormat: Codable, Hashable, Sendable {
    /// MPEG-4 audio object type: 2 AAC-LC, 5 HE-AAC (SBR), 29 HE-AAC v2 (PS).
    public var objectType: Int
    public var channels: Int
    public var sampleRate: Int

    public init(objectType: Int = 2, channels: Int, sampleRate: Int) {
        self.objectType = objectType
        self.channels = channels
        self.sampleRate = sampleRate
    }
}

/// The files of one rendition and their timing, in the track's own timescale (the `mdhd` one).
public struct MediaTrack: Codable, Hashable, Sendable {
    /// Ticks per second.
    public var timescale: Int64
    /// The first segment's earliest presentation time, in ticks (its `tfdt` plus composition offset).
    public var startTicks: Int64
    /// The init segment's file name, relative to the rendition's folder.
    public var initialization: String
    public var naming: SegmentNaming
    public var segments: [MediaSegment]

    public init(timescale: Int64, startTicks: Int64 = 0, initialization: String = "init.mp4",
                naming: SegmentNaming = SegmentNaming(), segments: [MediaSegment]) {
        self.timescale = timescale
        self.startTicks = startTicks
        self.initialization = initialization
        self.naming = naming
        self.segments = segments
    }

    /// The file name of segment `index` (counting from 0).
    public func fileName(_ index: Int) -> String { naming.fileName(index) }

    /// Ticks from the track's start to the start of segment `index`; `segments.count` gives the total.
    public func offset(ofSegment index: Int) -> Int64 { segments.prefix(index).reduce(0) { $0 + $1.duration } }

    public var totalDuration: Int64 { offset(ofSegment: segments.count) }
}

/// Media segment file names as one numbered pattern, `prefix` + number (zero-padded to `digits`) + `suffix`: what a
/// DASH `SegmentTemplate` with `$Number$` can name, and the same files HLS lists one by one.
public struct SegmentNaming: Codable, Hashable, Sendable {
    public var prefix: String
    /// Zero-padded width of the number; 0 or 1 for none.
    public var digits: Int
    public var suffix: String
    /// The first segment's number.
    public var firstNumber: Int

    public init(prefix: String = "segment_", digits: Int = 5, suffix: String = ".m4s", firstNumber: Int = 1) {
        self.prefix = prefix
        self.digits = digits
        self.suffix = suffix
        self.firstNumber = firstNumber
    }

    public func fileName(_ index: Int) -> String {
        let number = String(firstNumber + index)
        let padding = String(repeating: "0", count: max(0, digits - number.count))
        return prefix + padding + number + suffix
    }

    /// The DASH `media` template: `$` in the fixed parts doubled, as ISO/IEC 23009-1 5.3.9.4.4 asks.
    public var dashTemplate: String {
        let number = digits > 1 ? "$Number%0\(digits)d$" : "$Number$"
        return prefix.replacingDollars + number + suffix.replacingDollars
    }
}

/// One CMAF media segment (a moof+mdat, or several, in one file).
public struct MediaSegment: Codable, Hashable, Sendable {
    /// Ticks of the track's timescale.
    public var duration: Int64
    /// The file's size in bytes.
    public var byteSize: Int64
    /// The first sample is an IDR (audio: always true); all of them: `#EXT-X-INDEPENDENT-SEGMENTS`, `startWithSAP`.
    public var startsWithIDR: Bool
    /// The bytes from the segment's start through its first IDR sample (its moof, the mdat header and the sample),
    /// for the I-frame playlist; nil: none is written for this rung.
    public var iFrame: ByteRange?

    public init(duration: Int64, byteSize: Int64, startsWithIDR: Bool = true, iFrame: ByteRange? = nil) {
        self.duration = duration
        self.byteSize = byteSize
        self.startsWithIDR = startsWithIDR
        self.iFrame = iFrame
    }
}

/// `length` bytes starting at `offset` within a file (HLS `#EXT-X-BYTERANGE:length@offset`).
public struct ByteRange: Codable, Hashable, Sendable {
    public var offset: Int64
    public var length: Int64

    public init(offset: Int64, length: Int64) {
        self.offset = offset
        self.length = length
    }
}

extension String {
    /// `$` doubled, as a DASH template takes a literal dollar sign.
    var replacingDollars: String { split(separator: "$", omittingEmptySubsequences: false).joined(separator: "$$") }
}
