import ArgumentParser
import Foundation
import TesseraCore
import TesseraEngine

/// `-y` and `-n`, as ffmpeg's: an existing output is replaced only with `-y`.
struct OverwriteOptions: ParsableArguments {
    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Replace an output that exists already (as ffmpeg's -y).")
    var overwrite = false
    @Flag(name: .customShort("n"), help: "Never replace an existing output (the default; as ffmpeg's -n).") var never = false

    /// Refuses the first of `outputs` that exists, unless `-y`. A directory is left for the output
    /// checks to name.
    func check(_ outputs: [String]) throws(TesseraError) {
        if overwrite && never { throw TesseraError(.settings, "", "-y and -n contradict each other: give one of them") }
        guard !overwrite else { return }
        for path in outputs {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { continue }
            throw .output(path, "already exists: give -y to overwrite it")
        }
    }

    /// Refuses a streaming ladder's folder that holds anything (`OutputPath.existing`), unless `-y`.
    func check(folders: [String]) throws(TesseraError) {
        guard !overwrite, let folder = folders.first else { return }
        throw .output(folder, "already holds renditions: give -y to replace the folder")
    }
}

/// Paths that name no file: URLs and `-` (ffmpeg's standard input and output).
enum FilePaths {
    static func check(input: String?, output: String) throws(TesseraError) {
        // `s3://bucket/key` names an object: the one URL read and written.
        if let input, S3Location(url: input) == nil, let problem = FFmpegHabits.notAFile(input) { throw .input(input, problem) }
        if S3Location(url: output) == nil, let problem = FFmpegHabits.notAFile(output, output: true) { throw .output(output, problem) }
    }
}
