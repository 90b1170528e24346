import Foundation
import TesseraCore

/// The output checks and moves of a ladder job: a streaming folder (`DIR/master.m3u8` names `DIR`) or one file per rung.
extension OutputPath {
    /// Checks a job's output as `check(_:input:)` does, and a ladder's: a playlist or MPD inside a folder of its own
    /// whose parent exists and is writable, or an MP4 name whose per-rung files could each be written.
    public static func check(_ output: String, input: String, ladder: LadderSpec?) throws(TesseraError) {
        if S3Location.isS3(output) { return try checkObject(output, input: input, ladder: ladder) }
        guard let ladder else { return try check(output, input: input) }
        guard ladder.packaging.isStreaming else {
            for rung in ladder.ladder.rungs { try check(rung.outputPath(for: output), input: input) }
            return
        }
        let ext = URL(fileURLWithPath: output).pathExtension.lowercased()
        guard ["m3u8", "mpd"].contains(ext) else {
            throw .output(output, "a streaming ladder is named by its playlist: DIR/master.m3u8 or DIR/manifest.mpd")
        }
        let folder = streamingFolder(of: output)
        let name = URL(fileURLWithPath: folder).lastPathComponent
        guard !output.hasSuffix("/"), output.contains("/"), !["", ".", "..", "/"].contains(name) else {
            throw .output(output, "name a folder of its own for the renditions: DIR/\(URL(fileURLWithPath: output).lastPathComponent)")
        }
        let inputPath = URL(fileURLWithPath: input).standardizedFileURL.path
        if inputPath.hasPrefix(folder + "/") { throw .output(output, "its folder \(folder) holds the input") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .output(output, "\(folder) is a file, not a folder")
        }
        // The folder is replaced whole: only one of renditions (as Tessera writes them) may be, never a folder of
        // other files (`-o ./master.m3u8 -y` in a home directory).
        if let foreign = foreignEntry(in: folder) {
            throw .output(output, "its folder \(folder) holds \(foreign), which is not a rendition: name an empty or new folder")
        }
        let parent = URL(fileURLWithPath: folder).deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .output(output, "directory \(parent) does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: parent) else { throw .output(output, "directory \(parent) is not writable") }
    }

    /// What the job would replace: the output file, a non-empty streaming folder, or the rungs' existing files
    /// (every rung of the ladder as asked, before any is dropped). What `-y` must allow.
    public static func existing(_ output: String, ladder: LadderSpec?) -> [String] {
        guard let ladder else { return FileManager.default.fileExists(atPath: output) ? [output] : [] }
        if S3Location.isS3(output) { return [] }  // objects are put over
        guard ladder.packaging.isStreaming else {
            return ladder.ladder.rungs.map { $0.outputPath(for: output) }.filter { FileManager.default.fileExists(atPath: $0) }
        }
        let folder = streamingFolder(of: output)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            return FileManager.default.fileExists(atPath: folder) ? [folder] : []
        }
        return entries.isEmpty ? [] : [folder]
    }

    /// The first entry of `folder` that a streaming ladder does not write (playlists, MPDs, `NNNp` rung folders,
    /// `audio`); nil when there is none or no folder.
    static func foreignEntry(in folder: String) -> String? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.sorted().first { name in
            let lower = name.lowercased()
            if lower.hasSuffix(".m3u8") || lower.hasSuffix(".mpd") { return false }
            var isDirectory: ObjCBool = false
            let path = URL(fileURLWithPath: folder).appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return true }
            return !(name == "audio" || (name.hasSuffix("p") && Int(name.dropLast()) != nil))
        }
    }

    /// The folder of a streaming ladder: the playlist's or MPD's directory, as an absolute, standardized path (for an
    /// `s3://` output, the playlist's prefix as a URL).
    public static func streamingFolder(of output: String) -> String {
        if S3Location.isS3(output), let slash = output.lastIndex(of: "/") { return String(output[..<slash]) }
        return URL(fileURLWithPath: output).standardizedFileURL.deletingLastPathComponent().standardizedFileURL.path
    }

    /// A hidden name beside `path` (same directory, so a rename moves it): `.NAME.tessera-TAG-PID-RANDOM`.
    static func hiddenSibling(of path: String, tag: String) -> String {
        let url = URL(fileURLWithPath: path)
        let name = ".\(url.lastPathComponent).tessera-\(tag)-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        return url.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Moves a finished folder into place. An existing folder is first renamed aside and removed once the new
    /// one is in place, so the output path never holds a mix of old and new files. `mode`: as for `commit`.
    public static func commitFolder(_ temporary: String, to folder: String, mode: Int? = nil) throws(TesseraError) {
        try prepare(temporary, mode: mode, placing: folder)
        var isDirectory: ObjCBool = false
        var aside: String?
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                try? FileManager.default.removeItem(atPath: temporary)
                throw .output(folder, "is a file, not a folder: the renditions cannot be moved into place")
            }
            // Checked again here: files may have been put there since the job was planned.
            if let foreign = foreignEntry(in: folder) {
                try? FileManager.default.removeItem(atPath: temporary)
                throw .output(folder, "holds \(foreign), which is not a rendition: it is not replaced")
            }
            let old = hiddenSibling(of: folder, tag: "old")
            guard rename(folder, old) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: temporary)
                throw .output(folder, "cannot move the existing folder aside (\(reason))")
            }
            aside = old
        }
        guard rename(temporary, folder) == 0 else {
            let reason = String(cString: strerror(errno))
            if let aside { _ = rename(aside, folder) }
            try? FileManager.default.removeItem(atPath: temporary)
            throw .output(folder, "cannot move the finished folder into place (\(reason))")
        }
        if let aside { try? FileManager.default.removeItem(atPath: aside) }
    }
}
