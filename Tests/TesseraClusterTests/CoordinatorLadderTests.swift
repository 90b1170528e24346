import Foundation
import Testing
import TesseraCore
@testable import TesseraCluster

/// A ladder job through the coordinator's one stitch point: its folder (or files) appear whole once verified.
@Suite(.serialized)
struct CoordinatorLadderTests {
    static func ladder(_ packaging: LadderSpec.Packaging) throws -> LadderSpec {
        LadderSpec(ladder: try Ladder(parsing: "90,60"), packaging: packaging, segmentSeconds: 0.8)
    }

    @Test func aStreamingLadderAppearsAsOneFolderReplacingAnEmptyOne() throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        let input = try cluster.makeClip()
        try FileManager.default.createDirectory(atPath: cluster.directory.appendingPathComponent("hls").path, withIntermediateDirectories: false)
        let job = try cluster.submit(input, output: "hls/master.m3u8", ladder: try Self.ladder(.hlsAndDash))
        cluster.startWorker("worker-a", slots: 2)

        let ended = try #require(try cluster.waitForEnd(job.id))
        #expect(ended.state == .done, "\(ended.error ?? "")")
        let folder = URL(fileURLWithPath: job.output).deletingLastPathComponent().path
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["master.m3u8", "manifest.mpd", "90p", "60p", "audio"])
        #expect(try InProcessCluster.probe(folder + "/90p/index.m3u8").frames == 50)
        #expect(try InProcessCluster.probe(folder + "/60p/index.m3u8").height == 60)
        // Nothing temporary is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: cluster.directory.path).allSatisfy { !$0.contains(".tessera-") })
        #expect(cluster.failures.current.isEmpty)
    }

    @Test func aFilesLadderWritesOneMP4PerRung() throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        let input = try cluster.makeClip()
        var spec = try Self.ladder(.files)
        spec.ladder = try Ladder(parsing: "1080,90,60")
        let job = try cluster.submit(input, output: "out.mp4", ladder: spec)
        cluster.startWorker("worker-a", slots: 2)

        let ended = try #require(try cluster.waitForEnd(job.id))
        #expect(ended.state == .done, "\(ended.error ?? "")")
        #expect(!FileManager.default.fileExists(atPath: job.output))
        let low = try InProcessCluster.probe(cluster.directory.appendingPathComponent("out_60p.mp4").path)
        #expect(low.frames == 50 && low.height == 60)
        #expect(try InProcessCluster.probe(cluster.directory.appendingPathComponent("out_90p.mp4").path).height == 90)
        // The rung above the source is dropped, and the job's events say so.
        let notes = cluster.database.events(job.id).filter { $0.to == "ladder" }.compactMap(\.detail)
        #expect(notes.contains { $0.hasPrefix("--ladder: dropped 1080: above the source's") }, "\(notes)")
        #expect(!FileManager.default.fileExists(atPath: cluster.directory.appendingPathComponent("out_1080p.mp4").path))
    }
}
