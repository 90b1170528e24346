/// What the user asked of the picture: size, orientation, frame rate, colour. Frozen with the job;
/// the planner turns it into a `VideoOutputFormat` once the source is known.
public struct PictureSettings: Codable, Hashable, Sendable {
    /// Exact output size.
    public var size: FrameSize?
    /// A box to fit inside, keeping the display aspect ratio; never enlarges.
    public var maxSize: FrameSize?
    /// swscale quality: bicubic (default), bilinear, lanczos or fast.
    public var scaler: String?
    /// Constant output frame rate; nil keeps the source's timestamps.
    public var fps: Rational?
    /// `auto` (apply the source's display rotation), `none` (keep the stored pixels and the rotation
    /// metadata), or 0, 90, 180, 270 degrees clockwise applied to the stored pixels.
    public var rotate: String?
    /// `horizontal`, `vertical` or both, applied after rotation (a front camera's mirror image).
    public var mirror: [Mirror]?
    /// Convert to this colour standard; nil carries the source's.
    public var color: ColorStandard?

    public enum Mirror: String, Codable, Hashable, Sendable, CaseIterable {
        case horizontal, vertical
    }

    public enum ColorStandard: String, Codable, Hashable, Sendable, CaseIterable {
        case bt709, bt601
    }

    public static let scalers = ["bicubic", "bilinear", "lanczos", "fast"]
    public static let rotations = ["auto", "none", "0", "90", "180", "270"]

    public init(size: FrameSize? = nil, maxSize: FrameSize? = nil, scaler: String? = nil, fps: Rational? = nil,
                rotate: String? = nil, mirror: [Mirror]? = nil, color: ColorStandard? = nil) {
        self.size = size
        self.maxSize = maxSize
        self.scaler = scaler
        self.fps = fps
        self.rotate = rotate
        self.mirror = mirror
        self.color = color
    }

    public func validate() throws(SettingsError) {
        if size != nil && maxSize != nil { throw SettingsError("give --size or --max-size, not both") }
        if let size {
            guard size.width > 0, size.height > 0 else { throw SettingsError("--size \(size) must be at least 2x2") }
            guard size.width % 2 == 0, size.height % 2 == 0 else {
                throw SettingsError("--size \(size) must have even dimensions (4:2:0 video)")
            }
        }
        if let maxSize, maxSize.width < 2 || maxSize.height < 2 {
            throw SettingsError("--max-size \(maxSize) must be at least 2x2")
        }
        for box in [size, maxSize].compactMap({ $0 }) where box.width > 16384 || box.height > 16384 {
            throw SettingsError("\(box) is larger than H.264 allows (16384 pixels a side at most)")
        }
        if let scaler, !Self.scalers.contains(scaler) {
            throw SettingsError("unknown --scaler '\(scaler)' (use one of \(Self.scalers.joined(separator: ", ")))")
        }
        if let fps, !fps.isValid || fps.doubleValue > 1000 { throw SettingsError("--fps \(fps) is not a frame rate") }
        if let rotate, !Self.rotations.contains(rotate) {
            throw SettingsError("unknown --rotate '\(rotate)' (use one of \(Self.rotations.joined(separator: ", ")))")
        }
    }

    /// Clockwise quarter turns to apply to the stored pixels, given the source's display rotation
    /// (counter-clockwise degrees, as FFmpeg reports it), and whether the rotation metadata is carried.
    public func quarterTurns(sourceRotation: Double?) -> (turns: Int, keepsMetadata: Bool) {
        switch rotate ?? "auto" {
        case "none": return (0, true)
        case "auto":
            guard let rotation = sourceRotation, rotation.isFinite else { return (0, false) }
            let clockwise = Int((-rotation / 90).rounded())
            return (((clockwise % 4) + 4) % 4, false)
        default: return ((Int(rotate ?? "0") ?? 0) / 90 % 4, false)
        }
    }

    public var mirrorsHorizontally: Bool { mirror?.contains(.horizontal) ?? false }
    public var mirrorsVertically: Bool { mirror?.contains(.vertical) ?? false }
}

/// Width x height, written "1280x720".
public struct FrameSize: Codable, Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init?(_ text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w >= 0, h >= 0 else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let size = FrameSize(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not WIDTHxHEIGHT"))
        }
        self = size
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
