import TesseraCore
import TesseraEngine

/// The files a ladder job writes, as `transcode` and `submit` check them and `transcode` reports them.
extension JobSpec {
    /// What `-y` must allow to be replaced: the output; beside `-o out.mp4` the file of every rung asked for
    /// (`out_720p.mp4`; which rungs the source drops is known only once the job is planned); a streaming
    /// ladder's folder when it is not empty.
    func writtenPaths(for output: String) -> [String] {
        guard let ladder, ladder.packaging == .files else { return ladder == nil ? [output] : [] }
        return ladder.ladder.rungs.map { $0.outputPath(for: output) }
    }

    /// A streaming ladder's folder when it holds anything: what `-y` must allow to be replaced whole.
    func replacedFolders(for output: String) -> [String] {
        guard let ladder, ladder.packaging.isStreaming else { return [] }
        return OutputPath.existing(output, ladder: ladder)
    }
}

extension JobPlan {
    /// The first file the job wrote: the output, or beside `-o out.mp4` the first rung made.
    func writtenFirst(for output: String) -> String {
        guard let ladder, ladder.spec.packaging == .files, let first = ladder.resolved.rungs.first else { return output }
        return first.rung.outputPath(for: output)
    }
}
