import Foundation
import TesseraCore

/// The output is written to a temporary file beside it and renamed into place only once verified,
/// so a failed job leaves nothing at the output path.
public enum OutputPath {
    public static func check(_ output: String, input: String) throws(TesseraError) {
        let url = URL(fileURLWithPath: output)
        let ext = url.pathExtension.lowercased()
        guard ["mp4", "m4v"].contains(ext) else {
            throw .output(output, "Tessera writes MP4: name the output .mp4 or .m4v")
        }
        if URL(fileURLWithPath: input).standardizedFileURL.path == url.standardizedFileURL.path {
            throw .output(output, "is the input file")
        }
        try checkWritable(output)
    }

    /// The naming mistakes said before any other check (an existing output's): the output is the input, or a
    /// directory. A streaming ladder's output names a playlist in a folder, checked with the job.
    public static func checkNaming(_ output: String, input: String?, ladder: LadderSpec?) throws(TesseraError) {
        guard ladder?.packaging.isStreaming != true else { return }
        let path = URL(fileURLWithPath: output).standardizedFileURL.path
        if let input, URL(fileURLWithPath: input).standardizedFileURL.path == path { throw .output(output, "is the input file") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .output(output, "is a directory: name the output file in it (\(output.hasSuffix("/") ? output : output + "/")out.mp4)")
        }
    }

    /// Refuses a path whose directory is missing or read-only, or that is a directory itself.
    public static func checkWritable(_ path: String) throws(TesseraError) {
        var isDirectory: ObjCBool = false
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .output(path, "directory \(parent) does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: parent) else { throw .output(path, "directory \(parent) is not writable") }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .output(path, "is a directory")
        }
    }

    /// A hidden name beside `output`, ending in `pathExtension`.
    public static func temporary(for output: String, pathExtension: String = "mp4") -> String {
        let url = URL(fileURLWithPath: output)
        let name = ".\(url.deletingPathExtension().lastPathComponent).tessera-tmp-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max)).\(pathExtension)"
        return url.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Moves a finished file into place, first giving it `mode` when one is asked for (`--output-mode`).
    public static func commit(_ temporary: String, to output: String, mode: Int? = nil) throws(TesseraError) {
        try prepare(temporary, mode: mode, placing: output)
        guard rename(temporary, output) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw .output(output, "cannot move the finished file into place (\(reason))")
        }
    }
}
