import ArgumentParser
import Foundation
import TesseraCore
import TesseraEngine

/// What `transcode` does once the output is verified and in place: a poster frame, removing the source.
struct OutputExtrasOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also write a poster frame of the output: JPEG (.jpg, .jpeg) or PNG (.png).", valueName: "path"))
    var thumbnail: String?
    @Option(help: ArgumentHelp("Time of the poster frame: seconds (12.5) or [HH:]MM:SS.s (default: 10% into the video).", valueName: "time"))
    var thumbnailAt: String?
    @Flag(help: "Delete INPUT once the output is verified and in place (never after a failure).") var deleteSource = false

    /// The mistakes these options show without the paths: `--thumbnail-at` alone, or not a time.
    func validate() throws {
        if thumbnailAt != nil {
            guard thumbnail != nil else { throw TesseraError(.settings, "--thumbnail-at", "needs --thumbnail") }
            _ = try thumbnailSeconds
        }
    }

    /// The mistakes that need the paths, refused before any work starts.
    func check(input: String?, output: String) throws(TesseraError) {
        if deleteSource, S3Location.isS3(input ?? "") { throw TesseraError(.settings, "--delete-source", "removes local files only, not an s3:// input") }
        if let thumbnail { try Thumbnail.check(thumbnail, notOverwriting: [output] + (input.map { [$0] } ?? [])) }
        if deleteSource { try SourceRemoval.check(input: input, output: output) }
    }

    var thumbnailSeconds: Double? {
        get throws(TesseraError) {
            guard let thumbnailAt else { return nil }
            guard let seconds = Thumbnail.parseTime(thumbnailAt) else {
                throw TesseraError(.settings, "--thumbnail-at \(thumbnailAt)", "not a time: give seconds (12.5) or [HH:]MM:SS.s (00:00:12.5)")
            }
            return seconds
        }
    }

    /// After the job is done: the thumbnail, then (only if that worked) the source goes.
    func finish(input: String?, output: String) throws(TesseraError) {
        if let thumbnail {
            let picture = try Thumbnail.write(from: output, to: thumbnail, at: try thumbnailSeconds)
            let note = picture.clamped ? " (--thumbnail-at is past the end: the last frame)" : ""
            FileHandle.standardError.write(Data(String(format: "tessera: thumbnail %@: %dx%d %@ at %.3f s%@\n", thumbnail, picture.width,
                                                       picture.height, picture.format.rawValue, picture.seconds, note).utf8))
        }
        if deleteSource, let input { try SourceRemoval.remove(input, keeping: output) }
    }
}

/// `--delete-source`: the input goes only after the output is in place, and never when it is the output.
enum SourceRemoval {
    static func check(input: String?, output: String) throws(TesseraError) {
        guard let input else {
            throw TesseraError(.settings, "--delete-source", "needs an INPUT (there is no source when the sample clip is generated)")
        }
        if sameFile(input, output) { throw .input(input, "is the output file too: --delete-source would delete the result") }
        // A missing input is the probe's to report; one that exists must be deletable before anything starts.
        if FileManager.default.fileExists(atPath: input), !FileManager.default.isDeletableFile(atPath: input) {
            throw .input(input, "cannot be deleted (its directory is not writable), so --delete-source cannot be honoured")
        }
    }

    static func remove(_ input: String, keeping output: String) throws(TesseraError) {
        guard FileManager.default.fileExists(atPath: output), !sameFile(input, output) else {
            throw .input(input, "kept: the output \(output) is not in place")
        }
        do { try FileManager.default.removeItem(atPath: input) } catch {
            throw .input(input, "cannot delete the source (\(error.localizedDescription))")
        }
    }

    /// The same path after resolving symbolic links, or the same file by device and inode (a hard link).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        let resolved = { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path }
        if resolved(a) == resolved(b) { return true }
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }
}
