import Foundation
import TesseraCore

/// A private directory for encoded segments between encode and stitch, beside the output (same file
/// system, room for large jobs), removed when the job ends.
final class Spool: Sendable {
    let directory: URL

    init(near output: String) throws(TesseraError) {
        let url = URL(fileURLWithPath: output)
        directory = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tessera-spool-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .output(directory.path, "cannot create the spool directory (\(error.localizedDescription))")
        }
    }

    func url(_ index: Int) -> URL { directory.appendingPathComponent(String(format: "segment-%06d.tres", index)) }

    func store(_ segment: EncodedSegment) throws(TesseraError) {
        let final = url(segment.header.index)
        let temporary = directory.appendingPathComponent(".\(final.lastPathComponent).part")
        do {
            try SpoolFile.write(segment.serialized(), to: temporary.path)
            guard rename(temporary.path, final.path) == 0 else { throw SpoolFile.Failure(call: "rename", code: errno) }
        } catch {
            throw .output(final.path, "cannot write the encoded segment (\(error))")
        }
    }

    func load(_ index: Int) throws(TesseraError) -> EncodedSegment {
        let path = url(index)
        guard let data = FileManager.default.contents(atPath: path.path) else {
            throw TesseraError(.stitch, segment: index, "missing from the spool")
        }
        do {
            return try EncodedSegment(serialized: [UInt8](data))
        } catch {
            throw TesseraError(.stitch, segment: index, error.description)
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// Writes a spool file without `fsync`: a spooled result is checked (its checksum) before it is
/// stitched or trusted after a restart, and one that a crash damaged is encoded again, so waiting for
/// the disk on every segment (Foundation's `Data.write` does) buys nothing.
public enum SpoolFile {
    public struct Failure: Error, CustomStringConvertible {
        public var call: String
        public var code: Int32
        public var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    public static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(call: "open", code: errno) }
        var failure: Failure?
        bytes.withUnsafeBytes { raw in
            do throws(Failure) { try writeFully(fd, raw, at: 0) } catch { failure = error }
        }
        if close(fd) != 0, failure == nil { failure = Failure(call: "close", code: errno) }
        if let failure {
            unlink(path)
            throw failure
        }
    }
}
