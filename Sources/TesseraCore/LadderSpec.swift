/// A ladder job as frozen with it: the rungs, how they are packaged, and the packaging segment length.
public struct LadderSpec: Codable, Hashable, Sendable {
    /// What the job writes from its rungs.
    public enum Packaging: String, Codable, Hashable, Sendable {
        /// HLS (`master.m3u8`) over CMAF segments.
        case hls
        /// DASH (`manifest.mpd`) over CMAF segments.
        case dash
        /// Both manifests over one set of CMAF segments (`--also-dash`, `--also-hls`).
        case hlsAndDash = "hls+dash"
        /// One faststart MP4 per rung beside the output path (`out_720p.mp4`).
        case files

        public var writesHLS: Bool { self == .hls || self == .hlsAndDash }
        public var writesDASH: Bool { self == .dash || self == .hlsAndDash }
        public var isStreaming: Bool { self != .files }

        /// Packaging from the output path: `.m3u8` HLS, `.mpd` DASH, anything else one file per rung.
        public static func forOutput(_ path: String, alsoHLS: Bool = false, alsoDASH: Bool = false) -> Packaging {
            let lower = path.lowercased()
            if lower.hasSuffix(".m3u8") { return alsoDASH ? .hlsAndDash : .hls }
            if lower.hasSuffix(".mpd") { return alsoHLS ? .hlsAndDash : .dash }
            return .files
        }
    }

    public var ladder: Ladder
    public var packaging: Packaging
    /// Packaging segment length in seconds (`--hls-time`): every rung has an IDR at each multiple of it.
    public var segmentSeconds: Double
    /// The AAC muxed into every rung's segments instead of its own rendition (`--audio-per-rung`).
    public var audioPerRung: Bool
    /// Each rung's rate is its average, encoded in two passes (`--two-pass`), not a capped CRF's peak.
    public var twoPass: Bool

    public static let defaultSegmentSeconds = 6.0

    public init(ladder: Ladder, packaging: Packaging, segmentSeconds: Double = Self.defaultSegmentSeconds, audioPerRung: Bool = false,
                twoPass: Bool = false) {
        self.ladder = ladder
        self.packaging = packaging
        self.segmentSeconds = segmentSeconds
        self.audioPerRung = audioPerRung
        self.twoPass = twoPass
    }

    enum CodingKeys: String, CodingKey { case ladder, packaging, segmentSeconds, audioPerRung, twoPass }

    /// Jobs stored before two-pass ladders existed read as capped CRF.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ladder = try c.decode(Ladder.self, forKey: .ladder)
        packaging = try c.decode(Packaging.self, forKey: .packaging)
        segmentSeconds = try c.decode(Double.self, forKey: .segmentSeconds)
        audioPerRung = try c.decode(Bool.self, forKey: .audioPerRung)
        twoPass = try c.decodeIfPresent(Bool.self, forKey: .twoPass) ?? false
    }
}
