import Foundation
import S3Kit
import Testing
import TesseraCore
import TesseraTestSupport

/// Ladders and thumbnails put in S3 by real `tessera transcode` processes against moto with authentication on:
/// every file of an HLS ladder under the playlist's prefix (read back through its playlists, every rung
/// frame-exact), one MP4 per rung, a poster frame of an `s3://` output put as an object, and a refused upload
/// leaving nothing.
@Suite(.serialized) final class ObjectStorageLadderTests {
    let moto: MotoServer
    let client: S3Client

    init() throws {
        moto = try MotoServer()
        client = try moto.client(creatingBucket: "media")
    }

    func transcode(_ arguments: [String], credentials: AWSCredentials? = nil) throws -> Tool.Output {
        try Tool.run(Tool.tesseraBinary, ["transcode"] + arguments + ["--preset", "ultrafast", "--workers", "2"],
                     environment: moto.environment(credentials))
    }

    /// The object at `key`, written to `file`.
    func download(_ key: String, to file: URL) throws {
        let location = S3Location(bucket: "media", key: key)
        let size = try client.head(location).size
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(size == 0 ? [] : client.get(location, range: 0..<size)).write(to: file)
    }

    /// The HLS presentation under `prefix`, fetched by following its playlists only (what a player would ask for).
    func downloadLadder(_ prefix: String, to folder: URL) throws -> LadderFolder {
        try? FileManager.default.removeItem(at: folder)
        func fetch(_ relative: String) throws { try download(prefix + "/" + relative, to: folder.appendingPathComponent(relative)) }
        try fetch("master.m3u8")
        let output = try LadderFolder(folder: folder)
        for playlist in output.variants.map(\.uri) + output.iFrameVariants.map(\.uri) + output.media.compactMap({ $0["URI"] }) {
            try fetch(playlist)
            // The init segment (`#EXT-X-MAP`) and the media segments, beside their playlist.
            let directory = (playlist as NSString).deletingLastPathComponent
            for line in try output.text(playlist).split(whereSeparator: \.isNewline).map(String.init) {
                let map = LadderFolder.attributes(line)["URI"].flatMap { line.hasPrefix("#EXT-X-MAP:") ? $0 : nil }
                guard let file = map ?? (line.hasPrefix("#") || line.isEmpty ? nil : line) else { continue }
                if !FileManager.default.fileExists(atPath: output.path(directory + "/" + file)) { try fetch(directory + "/" + file) }
            }
        }
        return output
    }

    func expectMissing(_ key: String) {
        let missing = #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: key)) }
        #expect(missing?.code == .notFound, "\(key)")
    }

    @Test func anHLSLadderLandsUnderThePlaylistsPrefix() throws {
        let source = try LadderTests.source()
        let result = try transcode([source, "-o", "s3://media/title/master.m3u8", "--ladder", "240,144", "--hls-time", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let output = try downloadLadder("title", to: URL(fileURLWithPath: Fixtures.output("s3-ladder")))
        #expect(output.variants.count == 2, "\(output.master)")
        let frames = try Probe.frames(source)
        for variant in output.variants {
            let playlist = output.path(variant.uri)
            #expect(try Probe.frames(playlist) == frames, "\(variant.uri)")
            let check = try Probe.frameExactness(source: source, output: playlist)
            #expect(check.problems.isEmpty, "\(variant.uri): \(check.problems.prefix(5))")
        }
        let read = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output.path("master.m3u8"), "-map", "0", "-f", "null", "-"])
        #expect(read.status == 0 && read.stderr.isEmpty, "\(read.stderr)")
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
        let scratch = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(".tessera-upload-") }
        #expect(scratch.isEmpty, "local staging left: \(scratch)")
    }

    @Test func aFileLadderPutsOneMP4PerRung() throws {
        let source = try LadderTests.source()
        let result = try transcode([source, "-o", "s3://media/files/clip.mp4", "--ladder", "240,144"])
        #expect(result.status == 0, "\(result.stderr)")
        let frames = try Probe.frames(source)
        for (height, size) in [(240, "426x240"), (144, "256x144")] {
            let file = URL(fileURLWithPath: Fixtures.output("s3-rung-\(height).mp4"))
            try download("files/clip_\(height)p.mp4", to: file)
            #expect(try Probe.frames(file.path) == frames)
            let probed = try Probe.size(file.path)
            #expect("\(probed.width)x\(probed.height)" == size)
        }
        expectMissing("files/clip.mp4")
    }

    @Test func aThumbnailOfAnObjectIsPutAsAnObject() throws {
        let source = try LadderTests.source()
        let result = try transcode([source, "-o", "s3://media/out/clip.mp4", "--thumbnail", "s3://media/out/poster.jpg"])
        #expect(result.status == 0, "\(result.stderr)")
        let poster = URL(fileURLWithPath: Fixtures.output("s3-poster.jpg"))
        try download("out/poster.jpg", to: poster)
        let probed = try Tool.ffprobe(["-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", poster.path])
        #expect(probed.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,640,360", "\(probed)")
    }

    /// Keys that may read but not write: the ladder job fails naming the object it could not put, and nothing of
    /// it is left in the bucket or in local staging.
    @Test func aRefusedLadderUploadLeavesNothing() throws {
        let source = try LadderTests.source()
        let result = try transcode([source, "-o", "s3://media/refused/master.m3u8", "--ladder", "144", "--hls-time", "1"],
                                   credentials: moto.reader)
        #expect(result.status != 0)
        #expect(result.stderr.contains("s3://media/refused/144p/init.mp4: access denied"), "\(result.stderr)")
        for key in ["refused/master.m3u8", "refused/144p/init.mp4", "refused/144p/segment_00000.m4s"] { expectMissing(key) }
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
    }

    @Test func aStreamingLadderNeedsAPrefixOfItsOwn() throws {
        let result = try transcode([try LadderTests.source(), "-o", "s3://media/master.m3u8", "--ladder", "144"])
        #expect(result.status != 0)
        let line = result.stderr.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        #expect(line.contains("s3://media/master.m3u8") && line.contains("prefix of its own"), "\(result.stderr)")
    }
}
