import FFmpegKit

/// Process-wide engine settings and facts.
public enum EngineInfo {
    /// FFmpeg logs to stderr by default; Tessera reports its own errors, so FFmpeg stays quiet unless verbose.
    public static func configureLogging(verbose: Bool) { FFmpeg.setLogging(verbose: verbose) }

    /// Library versions, reported as a worker's capabilities.
    public static var libraryVersions: [String: String] { FFmpeg.versions }
}
