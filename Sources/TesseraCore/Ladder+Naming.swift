extension Ladder.Rung {
    /// The rung's file beside a single-file output: `out.mp4` → `out_720p.mp4`, `dir/out` → `dir/out_720p`.
    /// Only the last path component's extension moves; a leading dot (`.mp4`) is a name, not an extension.
    public func outputPath(for base: String) -> String {
        let nameStart = base.lastIndex(of: "/").map { base.index(after: $0) } ?? base.startIndex
        let name = base[nameStart...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return base + "_" + self.name }
        return String(base[..<dot]) + "_" + self.name + String(base[dot...])
    }
}
