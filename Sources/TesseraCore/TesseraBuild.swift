/// Facts about this build of Tessera.
public enum TesseraBuild {
    /// The release, as `tessera --version` prints it and `tessera_build_info` serves it.
    public static let version = "0.1.0"
}
