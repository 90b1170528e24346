/// What a user asked for, frozen with the job: the encoder settings every segment gets, the audio
/// handling and the segment length. Stored as JSON with the job; its digest tells jobs apart.
public struct JobSpec: Codable, Hashable, Sendable {
    public var settings: EncoderSettings
    public var audio: AudioSettings
    public var segmentSeconds: Double

    public init(settings: EncoderSettings = EncoderSettings(), audio: AudioSettings = AudioSettings(), segmentSeconds: Double = 8) {
        self.settings = settings
        self.audio = audio
        self.segmentSeconds = segmentSeconds
    }

    public var digest: String { CanonicalJSON.digest(self) }
}
