import Foundation
import Testing
import TesseraCore
import TesseraStore
import TesseraTestSupport

/// Priorities on a real cluster: a coordinator and a worker process, jobs submitted through the CLI.
@Suite(.serialized) struct PriorityClusterTests {
    /// A priority-90 job submitted behind a queue takes the worker as soon as it frees: at most one lease
    /// of the queue (a slot freed while the job was being loaded) comes between the job's plan and its
    /// first lease, and the whole job is done before the queue's last job starts.
    @Test func aPriorityJobOvertakesTheQueue() throws {
        let cluster = try Cluster()
        defer { cluster.shutdown() }
        try cluster.startCoordinator()
        try cluster.startWorker("w")
        let source = try SourceKind.closedGOPWithBFrames.make()
        let slow = ["--preset", "placebo"]
        var queue: [String] = []
        for k in 0..<5 { queue.append(try cluster.submit(source, cluster.directory.appendingPathComponent("q\(k).mp4").path, slow)) }
        let store = try cluster.openStore()
        defer { store.close() }
        // The worker is busy on the queue.
        try cluster.waitUntil(timeout: 60) { try store.events(queue[0]).contains { $0.to == SegmentState.leased.rawValue } }
        let urgent = try cluster.submit(source, cluster.directory.appendingPathComponent("urgent.mp4").path, slow + ["--priority", "90"])
        let done = try cluster.wait(urgent, timeout: 180)
        #expect(done.state == .done, "\(done.error ?? "")")
        #expect(done.priority == 90)

        let events = try store.events()
        let planned = try #require(events.firstIndex { $0.jobID == urgent && $0.to == JobState.encoding.rawValue })
        let leases = events[planned...].filter { $0.to == SegmentState.leased.rawValue }
        let first = try #require(leases.firstIndex { $0.jobID == urgent })
        let overtaken = leases[..<first].count
        #expect(overtaken <= 1, "\(overtaken) leases of the queue came first")
        let finished = try #require(events.lastIndex { $0.jobID == urgent && $0.to == SegmentState.done.rawValue })
        #expect(!events[...finished].contains { $0.jobID == queue[4] && $0.to == SegmentState.leased.rawValue },
                "the queue's last job waited for the priority job")
    }
}
