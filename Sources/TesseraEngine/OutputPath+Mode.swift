import Foundation
import TesseraCore

extension OutputPath {
    /// Gives a finished output its permission bits (`--output-mode`) before it is renamed into place: a file gets
    /// `mode`; a folder, and every folder in it, the matching folder mode (0644 gives 0755), its files `mode`.
    static func apply(mode: Int, to path: String, placing output: String) throws(TesseraError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else { return try change(path, to: mode, placing: output) }
        try change(path, to: OutputMode.directory(for: mode), placing: output)
        let entries = (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []
        for entry in entries {
            let inner = URL(fileURLWithPath: path).appendingPathComponent(entry).path
            guard FileManager.default.fileExists(atPath: inner, isDirectory: &isDirectory) else { continue }
            try change(inner, to: isDirectory.boolValue ? OutputMode.directory(for: mode) : mode, placing: output)
        }
    }

    /// `apply` to a temporary when a mode is asked for; the temporary is removed when that fails.
    static func prepare(_ temporary: String, mode: Int?, placing output: String) throws(TesseraError) {
        guard let mode else { return }
        do throws(TesseraError) { try apply(mode: mode, to: temporary, placing: output) } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    private static func change(_ path: String, to mode: Int, placing output: String) throws(TesseraError) {
        guard chmod(path, mode_t(mode)) == 0 else {
            throw .output(output, "cannot give it mode \(OutputMode.text(mode)) (\(String(cString: strerror(errno))))")
        }
    }
}
