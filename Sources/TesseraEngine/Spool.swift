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
        let bytes = segment.serialized()
        do {
            try Data(bytes).write(to: url(segment.header.index), options: .atomic)
        } catch {
            throw .output(url(segment.header.index).path, "cannot write the encoded segment (\(error.localizedDescription))")
        }
    }

    func load(_ index: Int) throws(TesseraError) -> EncodedSegment {
        let path = url(index)
        guard let data = FileManager.default.contents(atPath: path.path) else {
            throw TesseraError(.stitch, "segment \(index)", "missing from the spool")
        }
        do {
            return try EncodedSegment(serialized: [UInt8](data))
        } catch {
            throw TesseraError(.stitch, "segment \(index)", error.description)
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
