extension LadderSpec {
    /// The rung names as asked for, in order (`["1080p", "720p"]`); those above the source are dropped later.
    public var rungNames: [String] { ladder.rungs.map(\.name) }

    /// One line for the job's events: `rungs 1080p, 720p; HLS, 6 s segments`.
    public var summary: String {
        let packages = [packaging.writesHLS ? "HLS" : nil, packaging.writesDASH ? "DASH" : nil].compactMap { $0 }
        var line = "rungs \(rungNames.joined(separator: ", ")); "
        line += packages.isEmpty ? "one MP4 per rung" : packages.joined(separator: " and ") + ", \(segmentSeconds.formatted3) s segments"
        if audioPerRung { line += ", audio in every rung" }
        if twoPass { line += ", two passes" }
        return line
    }
}
