import TesseraCore

extension CoordinatorStateMachine {
    /// What a sweep read in the store of a job loaded here.
    struct StoredJob: Equatable {
        /// Whether the store says this coordinator holds it.
        var heldHere: Bool
        var state: JobState
        var segmentsDone: Int
        var segmentsTotal: Int
    }

    /// What a sweep does with a loaded job.
    enum SweepAction: Equatable {
        /// Another coordinator took it over while this one was away: let go of it, its spool kept.
        case lost
        /// It ended (done, failed, canceled): forget it.
        case forget
        /// A two-pass job's first pass is done: allocate its bits, then its second pass runs.
        case allocateSecondPass
        /// Its segments are all done: stitch it.
        case stitch
    }

    /// The sweep's decision for loaded job `job`, given what the store says of it; nil: nothing now (segments
    /// still to encode, a thread of its own at work on it, or a local fault stopping it).
    func sweepAction(_ job: String, _ stored: StoredJob) -> SweepAction? {
        guard let loaded = jobs[job] else { return nil }
        if !stored.heldHere { return .lost }
        if stored.state.isFinal { return .forget }
        guard stored.state == .encoding, stored.segmentsTotal > 0, stored.segmentsDone == stored.segmentsTotal,
              mayStitch(job), !loaded.stalled else { return nil }
        return loaded.pass == .first ? .allocateSecondPass : .stitch
    }
}
