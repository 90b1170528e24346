import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTesting
import ZMQKit
@testable import TesseraCluster

/// The coordinator's loop, its result spooler and a worker in one process: the store in memory, the workers over
/// `inproc://`. No PostgreSQL, no child process.
@Suite(.serialized)
struct CoordinatorLoopTests {
    @Test func runsAJobToDone() throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        let input = try cluster.makeClip()
        let job = try cluster.submit(input, output: "out.mp4")
        cluster.startWorker("worker-a", slots: 2)

        let ended = try #require(try cluster.waitForEnd(job.id))
        #expect(ended.state == .done, "\(ended.error ?? "")")
        #expect(ended.segmentsTotal > 1)
        #expect(ended.segmentsDone == ended.segmentsTotal)
        let segments = try cluster.database.open().segments(job.id)
        #expect(segments.allSatisfy { $0.state == .done && $0.attempts == 0 })
        let output = try InProcessCluster.probe(job.output)
        #expect(output.codec == "h264" && output.width == 160 && output.height == 90 && output.frames == 50)
        #expect(cluster.failures.current.isEmpty)
    }

    @Test func aLostWorkersSegmentIsLeasedAgain() throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        let input = try cluster.makeClip()
        let job = try cluster.submit(input, output: "out.mp4")

        // A worker that takes a task and disconnects without a word.
        let lost = try ZMQSocket(cluster.context, .dealer)
        try lost.setRoutingID(Array("worker-lost".utf8))
        try lost.connect(cluster.endpoint)
        try lost.send(ClusterMessage.ready(.init(workerID: "worker-lost", host: "test", slots: 1, capabilities: [:])).frames())
        var taken: ClusterMessage.SegmentRef?
        let deadline = Date().addingTimeInterval(60)
        while taken == nil, Date() < deadline {
            guard let frames = try lost.receive(timeout: 1), case .task(let task, _) = try ClusterMessage(frames: frames) else { continue }
            taken = task.segment
        }
        try lost.setLinger(milliseconds: 0)
        lost.close()
        let segment = try #require(taken)

        cluster.startWorker("worker-b")
        let ended = try #require(try cluster.waitForEnd(job.id))
        #expect(ended.state == .done, "\(ended.error ?? "")")
        let record = try #require(try cluster.database.open().segments(job.id).first { $0.index == segment.index })
        #expect(record.state == .done)
        #expect(record.attempts >= 1)
        // Leased to the lost worker, then to the one that finished it.
        let lessees = cluster.database.events(job.id).filter { $0.segmentIndex == segment.index }.compactMap(\.leasedTo)
        #expect(lessees.first == "worker-lost")
        #expect(lessees.last == "worker-b")
        #expect(try InProcessCluster.probe(job.output).frames == 50)
        #expect(cluster.failures.current.isEmpty)
    }
}
