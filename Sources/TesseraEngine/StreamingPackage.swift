import Foundation
import TesseraCore

/// The HLS playlists and the DASH manifest of a packaged presentation, written beside its CMAF folders: the master
/// playlist and the MPD in the root, a media playlist (and an I-frame playlist) in each rendition's folder.
public enum StreamingPackage {
    public static let masterName = "master.m3u8"
    public static let manifestName = "manifest.mpd"

    /// Writes every playlist and the MPD under `root` and returns their paths, the master first and the MPD last.
    /// A nil `master` writes no HLS playlist, a nil `manifest` no MPD.
    @discardableResult
    public static func write(_ presentation: PackagedPresentation, to root: String, master: String? = masterName,
                             manifest: String? = manifestName) throws(StreamingPackageError) -> [String] {
        var files: [(path: String, contents: String)] = []
        do throws(PackagingError) {
            if let master { files = try HLSPlaylist.files(presentation, masterPath: master).map { ($0.path, $0.contents) } }
            if let manifest { files.append((manifest, try DASHManifest.render(presentation))) }
        } catch {
            throw StreamingPackageError(.presentation, error.description, packaging: error)
        }
        var paths: [String] = []
        for file in files {
            let path = URL(fileURLWithPath: root).appendingPathComponent(file.path).path
            do {
                try Data(file.contents.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw StreamingPackageError(.writing, "\(path): cannot write (\(error.localizedDescription))")
            }
            paths.append(path)
        }
        return paths
    }
}

/// Why CMAF renditions could not be described or their playlists written: a code and one line naming the problem.
public struct StreamingPackageError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Codable, Sendable {
        /// A rendition's files do not fit the manifest model (folder outside the root, segment names, gaps, time base).
        case layout
        /// The video's SPS or the AAC AudioSpecificConfig cannot be read.
        case codecConfiguration
        /// The presentation fails the manifest writers' checks (e.g. rungs cut at other instants).
        case presentation
        /// A playlist or the MPD could not be written.
        case writing
    }

    public let code: Code
    public let description: String
    /// The manifest writers' own error, for `.presentation`.
    public let packaging: PackagingError?

    public init(_ code: Code, _ description: String, packaging: PackagingError? = nil) {
        self.code = code
        self.description = description
        self.packaging = packaging
    }
}
