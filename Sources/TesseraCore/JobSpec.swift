/// What a user asked for, frozen with the job: the encoder settings every segment gets, the audio
/// handling and the segment length. Stored as JSON with the job; its digest tells jobs apart.
public struct JobSpec: Codable, Hashable, Sendable {
    public var settings: EncoderSettings
    public var audio: AudioSettings
    /// Segment length as asked for (`--segment-seconds`); nil: cut where a whole-file encode puts IDR frames.
    public var segmentSeconds: Double?
    public var picture: PictureSettings
    /// A rendition ladder and its packaging; nil: one output.
    public var ladder: LadderSpec?
    /// Permission bits of the output files (`--output-mode`); nil: the coordinator's default, else its umask's.
    public var outputMode: Int?
    /// Whether an existing output may be replaced: nil, `submit` checked that where it ran (`-y`, or no output
    /// there); true or false, the coordinator decides when it plans (`submit --remote-path`, with `-y` or not).
    public var replacesOutputs: Bool?
    /// The share of its results audited by re-encoding (0 to 1); nil: the coordinator's `--audit`. Never sent
    /// to workers.
    public var audit: Double?

    public init(settings: EncoderSettings = EncoderSettings(), audio: AudioSettings = AudioSettings(), segmentSeconds: Double? = nil,
                picture: PictureSettings = PictureSettings(), ladder: LadderSpec? = nil, outputMode: Int? = nil) {
        self.settings = settings
        self.audio = audio
        self.segmentSeconds = segmentSeconds
        self.picture = picture
        self.ladder = ladder
        self.outputMode = outputMode
    }

    enum CodingKeys: String, CodingKey { case settings, audio, segmentSeconds, picture, ladder, outputMode, replacesOutputs, audit }

    /// Jobs stored before picture settings existed read as having none.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        settings = try c.decode(EncoderSettings.self, forKey: .settings)
        audio = try c.decode(AudioSettings.self, forKey: .audio)
        segmentSeconds = try c.decodeIfPresent(Double.self, forKey: .segmentSeconds)
        picture = try c.decodeIfPresent(PictureSettings.self, forKey: .picture) ?? PictureSettings()
        ladder = try c.decodeIfPresent(LadderSpec.self, forKey: .ladder)
        outputMode = try c.decodeIfPresent(Int.self, forKey: .outputMode)
        replacesOutputs = try c.decodeIfPresent(Bool.self, forKey: .replacesOutputs)
        audit = try c.decodeIfPresent(Double.self, forKey: .audit)
    }

    public var digest: String { CanonicalJSON.digest(self) }

    /// Whether the job encodes in two passes: with `--bitrate`, or a ladder with `--two-pass`.
    public var twoPass: Bool { settings.twoPass || ladder?.twoPass == true }
}
