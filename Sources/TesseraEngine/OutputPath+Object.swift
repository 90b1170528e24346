import Foundation
import TesseraCore

/// An output in S3 (`s3://bucket/key.mp4`): one MP4, uploaded once stitched and verified.
extension OutputPath {
    static func checkObject(_ output: String, input: String, ladder: LadderSpec?) throws(TesseraError) {
        guard ladder == nil else { throw .output(output, "a ladder is written to local files: give a local -o") }
        guard let location = S3Location(url: output) else { throw .output(output, "name an object: s3://bucket/key.mp4") }
        guard ["mp4", "m4v"].contains(URL(fileURLWithPath: location.key).pathExtension.lowercased()) else {
            throw .output(output, "Tessera writes MP4: name the output .mp4 or .m4v")
        }
        if output == input { throw .output(output, "is the input object") }
    }
}
