import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// Where a ladder's outputs go: the checks before any work, and the folder moved into place whole.
@Suite struct LadderOutputTests {
    static let streaming = LadderSpec(ladder: try! Ladder(parsing: "720,360"), packaging: .hls)
    static let files = LadderSpec(ladder: try! Ladder(parsing: "720,360"), packaging: .files)

    @Test func streamingOutputsNeedAFolderOfTheirOwn() throws {
        let root = Fixtures.output("ladder-paths")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let input = root + "/in.mp4"
        FileManager.default.createFile(atPath: input, contents: Data())

        try OutputPath.check(root + "/hls/master.m3u8", input: input, ladder: Self.streaming)
        try OutputPath.check(root + "/dash/stream.mpd", input: input, ladder: LadderSpec(ladder: Self.streaming.ladder, packaging: .dash))
        func refused(_ output: String, _ spec: LadderSpec) -> Bool {
            do { try OutputPath.check(output, input: input, ladder: spec) } catch { return error.kind == .output }
            return false
        }
        #expect(refused("master.m3u8", Self.streaming), "no folder of its own")
        #expect(refused(root + "/missing/hls/master.m3u8", Self.streaming), "the folder's parent does not exist")
        #expect(refused(root + "/master.m3u8", Self.streaming), "the folder holds the input")
        #expect(refused(input + "/master.m3u8", Self.streaming), "the folder is a file")
        #expect(refused(root + "/in.m3u8", Self.files), "a files ladder writes MP4")
        #expect(refused(root + "/in.mp4", Self.files) == false, "in_720p.mp4 and in_360p.mp4 are not the input")
        // A folder is replaced whole: only one of renditions may be, never one of other files.
        try FileManager.default.createDirectory(atPath: root + "/home/720p", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/home/master.m3u8", contents: Data())
        #expect(refused(root + "/home/master.m3u8", Self.streaming) == false, "an earlier ladder's folder")
        FileManager.default.createFile(atPath: root + "/home/notes.txt", contents: Data())
        #expect(refused(root + "/home/master.m3u8", Self.streaming), "a folder holding other files")
    }

    @Test func existingOutputsAreWhatOverwriteMustAllow() throws {
        let root = Fixtures.output("ladder-existing")
        try FileManager.default.createDirectory(atPath: root + "/hls", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(OutputPath.existing(root + "/hls/master.m3u8", ladder: Self.streaming).isEmpty, "an empty folder")
        #expect(OutputPath.existing(root + "/none/master.m3u8", ladder: Self.streaming).isEmpty)
        FileManager.default.createFile(atPath: root + "/hls/old.ts", contents: Data())
        #expect(OutputPath.existing(root + "/hls/master.m3u8", ladder: Self.streaming) == [root + "/hls"])
        FileManager.default.createFile(atPath: root + "/out_360p.mp4", contents: Data())
        #expect(OutputPath.existing(root + "/out.mp4", ladder: Self.files) == [root + "/out_360p.mp4"])
        #expect(OutputPath.existing(root + "/out.mp4", ladder: nil).isEmpty)
    }

    @Test func aFolderReplacesTheOldOneWhole() throws {
        let root = Fixtures.output("ladder-commit")
        try FileManager.default.createDirectory(atPath: root + "/hls", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/hls/1080p", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/hls/1080p/init.mp4", contents: Data())
        let destination = LadderOutput(output: root + "/hls/master.m3u8", spec: Self.streaming, rungs: Self.streaming.ladder.rungs)
        #expect(destination.places == [root + "/hls"])
        #expect(destination.masterName == "master.m3u8" && destination.manifestName == nil)
        try FileManager.default.createDirectory(atPath: destination.temporaryFolder, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: destination.temporaryFolder + "/master.m3u8", contents: Data("#EXTM3U\n".utf8))
        try destination.commit()
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/hls") == ["master.m3u8"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["hls"], "nothing left beside it")
        // Files put in the folder since the check: it is not replaced.
        FileManager.default.createFile(atPath: root + "/hls/mine.doc", contents: Data())
        try FileManager.default.createDirectory(atPath: destination.temporaryFolder, withIntermediateDirectories: false)
        #expect(throws: TesseraError.self) { try destination.commit() }
        #expect(FileManager.default.fileExists(atPath: root + "/hls/mine.doc"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["hls"], "the temporary folder is gone")
        try FileManager.default.removeItem(atPath: root + "/hls/mine.doc")

        let both = LadderOutput(output: root + "/x/stream.mpd", spec: LadderSpec(ladder: Self.streaming.ladder, packaging: .hlsAndDash),
                                rungs: Self.streaming.ladder.rungs)
        #expect(both.masterName == "master.m3u8" && both.manifestName == "stream.mpd")
        let perRung = LadderOutput(output: root + "/out.mp4", spec: Self.files, rungs: Self.files.ladder.rungs)
        #expect(perRung.places == [root + "/out_720p.mp4", root + "/out_360p.mp4"])
        #expect(perRung.masterName == nil && perRung.manifestName == nil)
    }
}
