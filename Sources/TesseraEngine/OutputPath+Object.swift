import Foundation
import TesseraCore

/// An output in S3: one MP4 (`s3://bucket/key.mp4`, streamed into its upload by `ObjectStitch`), or a ladder
/// (`s3://bucket/title/master.m3u8`, or one MP4 per rung), written to local scratch, verified there, and uploaded.
extension OutputPath {
    static func checkObject(_ output: String, input: String, ladder: LadderSpec?) throws(TesseraError) {
        guard let location = S3Location(url: output) else { throw .output(output, "name an object: s3://bucket/key.mp4") }
        let ext = URL(fileURLWithPath: location.key).pathExtension.lowercased()
        if let ladder, ladder.packaging.isStreaming {
            guard ["m3u8", "mpd"].contains(ext) else {
                throw .output(output, "a streaming ladder is named by its playlist: s3://bucket/DIR/master.m3u8 or …/manifest.mpd")
            }
            guard location.key.contains("/") else {
                throw .output(output, "name a prefix of its own for the renditions: s3://\(location.bucket)/DIR/\(location.key)")
            }
        } else {
            guard ["mp4", "m4v"].contains(ext) else { throw .output(output, "Tessera writes MP4: name the output .mp4 or .m4v") }
        }
        if output == input { throw .output(output, "is the input object") }
    }

    /// A local path in the temporary directory where an upload is staged (`pathExtension` nil: a folder's name).
    public static func uploadStaging(pathExtension: String?) -> String {
        let name = ".tessera-upload-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        return FileManager.default.temporaryDirectory.appendingPathComponent(name + (pathExtension.map { "." + $0 } ?? "")).path
    }
}
