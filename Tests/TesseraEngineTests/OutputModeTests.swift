import Foundation
import Testing
import TesseraCore
@testable import TesseraEngine
import TesseraTestSupport

/// `--output-mode`: the bits given to a finished output before it is renamed into place.
@Suite struct OutputModeTests {
    static func mode(_ path: String) -> Int {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : -1
    }

    @Test func modesParseAsOctalAndFoldersGetSearchWhereFilesAreRead() {
        #expect(OutputMode.parse("0644") == 0o644 && OutputMode.parse("640") == 0o640 && OutputMode.parse("0600") == 0o600)
        #expect(OutputMode.parse("0844") == nil && OutputMode.parse("1777") == nil && OutputMode.parse("") == nil && OutputMode.parse("rw") == nil)
        #expect(OutputMode.text(0o644) == "0644" && OutputMode.text(0o40) == "0040")
        #expect(OutputMode.directory(for: 0o644) == 0o755 && OutputMode.directory(for: 0o640) == 0o750 && OutputMode.directory(for: 0o600) == 0o700)
    }

    @Test func aFileAndAFolderGetTheirModesBeforeTheRename() throws {
        let root = Fixtures.output("output-mode-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let temporary = OutputPath.temporary(for: root + "/out.mp4")
        #expect(FileManager.default.createFile(atPath: temporary, contents: Data(), attributes: [.posixPermissions: 0o600]))
        try OutputPath.commit(temporary, to: root + "/out.mp4", mode: 0o644)
        #expect(Self.mode(root + "/out.mp4") == 0o644)

        let spec = LadderSpec(ladder: try Ladder(parsing: "720,360"), packaging: .hls)
        let ladder = LadderOutput(output: root + "/hls/master.m3u8", spec: spec, rungs: spec.ladder.rungs)
        try FileManager.default.createDirectory(atPath: ladder.temporaryFolder + "/720p", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: ladder.temporaryFolder + "/720p/init.mp4", contents: Data(), attributes: [.posixPermissions: 0o600]))
        try ladder.commit(mode: 0o640)
        #expect(Self.mode(root + "/hls") == 0o750 && Self.mode(root + "/hls/720p") == 0o750)
        #expect(Self.mode(root + "/hls/720p/init.mp4") == 0o640)

        // Without a mode, the file keeps the one it was made with.
        let plain = OutputPath.temporary(for: root + "/plain.mp4")
        #expect(FileManager.default.createFile(atPath: plain, contents: Data(), attributes: [.posixPermissions: 0o600]))
        try OutputPath.commit(plain, to: root + "/plain.mp4")
        #expect(Self.mode(root + "/plain.mp4") == 0o600)
    }
}
