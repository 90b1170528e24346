import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore

extension CoordinatorLoop {
    /// This coordinator's heartbeat in the store, jobs adopted from silent coordinators or lost to live
    /// ones, inputs that changed, and stalled jobs whose fault may have cleared.
    func performFailover(_ duties: CoordinatorStateMachine.Duties) throws {
        if duties.presence {
            try store.coordinatorHeartbeat(options.coordinatorID, host: ProcessInfo.processInfo.hostName, endpoint: coordinator.endpoint)
            try recordProgress()
        }
        if duties.adopt {
            try adoptAndLetGo(orphans: duties.orphans)
            checkInputs()
        }
        if duties.faults { try checkFaults() }
    }

    /// With `orphans`, takes over the jobs of coordinators silent longer than `--takeover-after`; lets go of
    /// the jobs another coordinator took over from this one while it was away.
    func adoptAndLetGo(orphans: Bool) throws {
        if orphans {
            let adopted = try store.adoptOrphanedJobs(coordinator: options.coordinatorID, silence: options.takeoverAfter)
            for adoption in adopted {
                logger.warning("took over a job from a silent coordinator", metadata: [
                    "job.id": "\(adoption.jobID)", "coordinator.previous": "\(adoption.previous ?? "none")", "job.state": "\(adoption.state.rawValue)"])
            }
            if !adopted.isEmpty { machine.adopted() }
        }
        for job in try store.jobsHeldElsewhere(machine.jobs.keys.sorted(), coordinator: options.coordinatorID) { lost(job) }
    }

    /// Forgets a job another coordinator holds now: its workers stop their tasks of it (their leases are
    /// the other's), its late results are dropped, and its spool stays for the other to read.
    func lost(_ job: String) {
        logger.warning("another coordinator took the job over; letting it go", metadata: ["job.id": "\(job)"])
        drop(job, keepingSpool: true)
    }

    /// Records, about once a second, the frames encoded in tasks still in flight and the rate, for the jobs
    /// whose figures changed. Tasks no longer in flight (their worker gone, their lease handed back) stop
    /// counting first.
    func recordProgress() throws {
        let inFlight = Set(machine.peers.values.flatMap(\.inFlight.keys))
        for segment in meter.reported.keys where !inFlight.contains(segment) { meter.abandoned(segment) }
        let now = Stopwatch.now
        for job in meter.taken().sorted() where machine.jobs[job] != nil {
            let fps = meter.rate(job, now: now)
            // As a multiple of real time: the source's frames per second of video.
            let plan = loaded[job]?.plan
            let frames = plan.map { $0.cuts.segments.reduce(0) { $0 + $1.frameCount } } ?? 0
            let speed = fps.flatMap { fps in plan.flatMap { $0.outputDurationSeconds > 0 && frames > 0 ? fps * $0.outputDurationSeconds / Double(frames) : nil } }
            try store.recordProgress(job, framesEncoding: meter.inFlight(job), fps: fps, speed: speed)
        }
    }

    /// Checks, off the loop, that the loaded jobs' inputs are the ones they pinned (`checked` fails those that are not).
    func checkInputs() {
        for (id, job) in loaded.sorted(by: { $0.key < $1.key }) { checkInput(of: id, job.plan) }
    }

    /// A job stopped by a local fault: nothing of it is leased, and `status` says why.
    func stall(_ job: String, _ fault: LocalFault) throws {
        let stall = machine.jobStalled(job)
        guard stall != .notLoaded else { return }
        if stall == .stalled {
            logger.warning("job waits on a local fault", metadata: ["job.id": "\(job)", "reason": "\(fault.reason)"])
        }
        faults[job] = fault
        try store.setStalled(job, reason: fault.reason)
    }

    /// Stalled jobs resume when their fault cleared, and fail when it lasted longer than the limit.
    func checkFaults() throws {
        for job in machine.stalledJobs {
            guard let fault = faults[job], !fault.cleared else {
                faults[job] = nil
                try store.setStalled(job, reason: nil)
                machine.jobResumed(job)
                logger.info("local fault cleared, job resumes", metadata: ["job.id": "\(job)"])
                continue
            }
            let waited = try store.setStalled(job, reason: fault.reason)
            if waited > options.faultLimit {
                try? store.setState(job, to: .failed, error: "\(fault.problem) for \(Int(waited)) s (limit \(Int(options.faultLimit)) s)")
                drop(job)
            }
        }
    }
}
