import Foundation
import Testing
import TesseraCore
@testable import TesseraStore

@Suite(.serialized) struct PriorityTests {
    /// Planning takes the highest priority first, the oldest within a priority.
    @Test func claimingTakesHigherPrioritiesFirst() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        let low = try store.submit(input: "/in.mp4", output: "/low.mp4", spec: JobSpec(), priority: 10)
        let older = try store.submit(input: "/in.mp4", output: "/older.mp4", spec: JobSpec())
        let newer = try store.submit(input: "/in.mp4", output: "/newer.mp4", spec: JobSpec())
        let urgent = try store.submit(input: "/in.mp4", output: "/urgent.mp4", spec: JobSpec(), priority: 90)
        var order: [String] = []
        while let job = try store.claimQueuedJob(coordinator: "c") { order.append(job.id) }
        #expect(order == [urgent, older, newer, low])
        #expect(try store.job(urgent).priority == 90)
        #expect(try store.job(older).priority == 50, "the default")
    }

    /// While its planned work fills the workers, a coordinator claims only a job that outranks every job
    /// with segments pending; the rest wait to be planned when the work runs short.
    @Test func aFullCoordinatorClaimsOnlyAJobThatOutranksItsPendingWork() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        _ = try store.plannedJob(segments: 4, coordinator: "c")
        let waiting = try store.submit(input: "/in.mp4", output: "/waiting.mp4", spec: JobSpec())
        #expect(try store.claimQueuedJob(coordinator: "c", outranking: true) == nil)
        #expect(try store.load(coordinator: "c", priority: 50).queuedJobs == 1)
        let urgent = try store.submit(input: "/in.mp4", output: "/urgent.mp4", spec: JobSpec(), priority: 90)
        #expect(try store.claimQueuedJob(coordinator: "c", outranking: true)?.id == urgent)
        // Another coordinator, with nothing pending, has nothing to outrank: its slots are filled by the
        // jobs it is planning (a sweep claimed every queued job so). It takes the waiting job when it wants one.
        #expect(try store.claimQueuedJob(coordinator: "d", outranking: true) == nil)
        #expect(try store.claimQueuedJob(coordinator: "d")?.id == waiting)
    }

    /// The load counts what the encoders have left of their leases: the frames reported encoded are not
    /// work ahead any more; and how long ago the last job was submitted.
    @Test func theLoadCountsWhatLeasesHaveLeft() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        try store.heartbeat(worker: "a", host: "test")
        let job = try store.plannedJob(segments: 2, coordinator: "c")
        #expect(try store.lease(worker: "a", seconds: 60).count == 1)
        let pixels = Double(1280 * 720)
        let before = try store.load(coordinator: "c", priority: 50)
        #expect(before.encoders == 1 && before.leasedWork == 10 * pixels && before.pendingWork == 10 * pixels)
        try store.recordProgress(job, framesEncoding: 6, fps: nil, speed: nil)
        let after = try store.load(coordinator: "c", priority: 50)
        #expect(after.leasedWork == 4 * pixels && after.pendingWork == 10 * pixels)
        #expect(after.quietSeconds >= 0 && after.quietSeconds < 60)
    }

    @Test func aPriorityOutsideZeroToHundredIsRefused() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        #expect(throws: StoreError.self) { try store.submit(input: "/in.mp4", output: "/o.mp4", spec: JobSpec(), priority: 101) }
        #expect(throws: StoreError.self) { try store.submit(input: "/in.mp4", output: "/o.mp4", spec: JobSpec(), priority: -1) }
        #expect(try store.jobs().isEmpty)
    }

    /// A priority-90 job planned behind 50 queued jobs takes the next free slot, and every slot after it
    /// while it has pending segments; within a priority, leasing stays fair (fewest leases first).
    @Test func aPriorityJobOvertakesTheQueue() throws {
        let (store, _) = try TestDatabase.store()
        defer { store.close() }
        for w in ["a", "b"] { try store.heartbeat(worker: w, host: "test") }
        var queue: [String] = []
        for _ in 0..<50 { queue.append(try store.plannedJob(segments: 4)) }
        // Both workers busy on the oldest jobs.
        let busy = try store.lease(slots: ["a", "b"], seconds: 60)
        #expect(busy.count == 2)
        #expect(Set(busy.map(\.lease.jobID)).isSubset(of: Set(queue.prefix(2))))
        let urgent = try store.plannedJob(segments: 3, priority: 90)
        let urgentToo = try store.plannedJob(segments: 3, priority: 90)

        // A worker frees: its next lease is the urgent job's, though 50 older jobs wait.
        let (a0, l0) = busy[0]
        #expect(try store.release(l0.jobID, l0.index, worker: a0, error: nil))
        let next = try #require(try store.lease(slots: [a0], seconds: 60).first)
        #expect(next.lease.jobID == urgent)
        // Fair within priority 90: the job holding no lease comes next, then they alternate.
        let more = try store.lease(slots: ["a", "b", "a", "b"], seconds: 60)
        #expect(more.map(\.lease.jobID) == [urgentToo, urgent, urgentToo, urgent])
        // Only when priority 90 has nothing pending does priority 50 get a slot.
        let rest = try store.lease(slots: ["a", "b", "a"], seconds: 60)
        #expect(rest.map(\.lease.jobID).filter { $0 == urgent || $0 == urgentToo }.count == 1)
        #expect(rest.map(\.lease.jobID).filter { queue.contains($0) }.count == 2)
    }
}
