import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore

extension Coordinator {
    /// Probes and plans a job (recording the segments when it is new), or rebuilds the plan of a job
    /// the store already has, keeping the recorded segments; done segments whose spooled result is
    /// missing or damaged go back to pending. A new plan counts on `encoders` (the connected workers).
    func prepare(_ id: String, store: any CoordinatorStore, planNew: Bool, encoders: Int) throws {
        let started = Stopwatch.now, waited = store.queryTime
        var analysis = 0.0
        defer {
            let elapsed = Stopwatch.now - started, database = store.queryTime - waited
            phaseTimings.withValue {
                $0.probeAndPlan += elapsed - database - analysis
                $0.sceneAnalysis += analysis
            }
        }
        let job = try store.job(id)
        do {
            try OutputPath.check(job.output, input: job.input, ladder: job.spec.ladder)
            // A job submitted with paths only this host sees (`--remote-path`): `-n` is kept here.
            if planNew, job.spec.replacesOutputs == false, let existing = OutputPath.existing(job.output, ladder: job.spec.ladder).first {
                throw TesseraError.output(existing, "already exists: give -y to overwrite it")
            }
            let probe = try knownProbe.current.flatMap { $0.describes(job.input) ? $0 : nil } ?? MediaProbe.probe(job.input)
            var jobOptions = JobOptions(spec: job.spec, workers: options.planningWorkers)
            // A new plan follows the load: few long segments while queued work keeps every encoder busy. A
            // private coordinator's one job (`tessera transcode`) has the workers started for it to itself:
            // it is cut as a job alone is, for `planningWorkers`, without asking the store.
            if planNew, options.onlyJob == nil {
                var load = try store.load(coordinator: options.coordinatorID, priority: job.priority)
                // A cluster's coordinator cuts automatically for the workers it has (one encoder each at
                // least), not for `planningWorkers`.
                if encoders > 0 {
                    load.freeEncoders = max(0, encoders - load.encoders)
                    load.encoders = max(load.encoders, encoders)
                    if job.spec.segmentSeconds == nil { jobOptions.workers = load.encoders }
                }
                jobOptions.load = load
            }
            var plan = try JobPlanner.plan(probe, options: jobOptions, jobID: id)
            analysis = plan.probe.sceneAnalysisSeconds
            // The input as first planned; the same file every time the job is prepared again (a restart,
            // another coordinator), or the job fails.
            let identity = try InputIdentity(of: probe)
            let pinned = try InputIdentity(json: store.pinInput(id, identity: identity.json))
            try pinned.check(identity, path: job.input)
            plan.inputIdentity = pinned
            // A two-pass job whose bits are allocated is in its second pass.
            if plan.settings.twoPass { plan.secondPass = try store.secondPass(id) }
            // The job's headers come from its settings, on this coordinator's libx264; results must match.
            let headers = try plan.encoderHeaders()
            var done: Set<Int> = []
            _ = try store.referenceExtradata(id, proposing: headers.hexString)
            if planNew {
                guard try store.addSegments(id, plan.cuts.segments, framePixels: plan.framePixels, outputs: plan.rungCount) else {
                    events.withValue { $0.append(.released(id)) }
                    return
                }
                // Rungs above the source are dropped: the job's events say which, as `transcode` does on its terminal.
                if let notice = plan.ladder?.resolved.notice { try store.recordNote(id, kind: "ladder", detail: notice) }
                logger.info("planned", metadata: ["job.id": "\(id)", "job.segments": "\(plan.cuts.segments.count)",
                                                  "cluster.encoders.busy": "\(jobOptions.load?.encoders ?? 0)",
                                                  "cluster.work.ahead": "\(Int((jobOptions.load?.queuedWork ?? 0) / 1e6))Mpx",
                                                  "cluster.jobs.queued": "\(jobOptions.load?.queuedJobs ?? 0)"])
            } else {
                let recorded = try store.plannedSegments(id)
                // The recorded plan must still fit the file (it may have been replaced since).
                guard recorded.allSatisfy({ $0.lastPacket < probe.packets.count }),
                      recorded.first.map({ probe.packets[$0.firstPacket].randomAccess != .none }) ?? true else {
                    throw TesseraError.input(job.input, "changed since the job was planned")
                }
                if !recorded.isEmpty { plan.cuts.segments = recorded }
                for segment in try store.segments(id) where segment.state == .done {
                    if segment.spooled.map(ResultSpool.intact) == true { done.insert(segment.index) } else {
                        try store.redo(id, segment.index, reason: "spooled result missing or damaged")
                    }
                }
            }
            audioAhead.start(id, plan, group: backgroundThreads, stopping: running.current)
            events.withValue { $0.append(.ready(id, plan, outstanding: Set(plan.cuts.segments.map(\.index)).subtracting(done))) }
        } catch let error as TesseraError {
            events.withValue { $0.append(.failed(id, error.description)) }
        }
    }

    /// Encodes the audio once, stitches the spooled segments (a ladder: packages every rung), verifies, and moves
    /// the output (the ladder's folder or files) into place.
    func stitch(_ id: String, _ plan: JobPlan, _ store: any CoordinatorStore) throws {
        let job = try store.job(id)
        let records = Dictionary(uniqueKeysWithValues: try store.segments(id).map { ($0.index, $0) })
        let destination = StitchDestination(plan: plan, output: job.output)
        var timings = PhaseTimings()
        // Recorded before the job's state changes, so whoever watches the state reads them complete.
        func record() {
            phaseTimings.withValue { $0.audio += timings.audio; $0.stitch += timings.stitch; $0.verification += timings.verification }
        }
        do throws(TesseraError) {
            let audio = try Stopwatch.time(&timings.audio) { () throws(TesseraError) in
                if let made = audioAhead.take(id) { return made }
                return try AudioTranscoder.run(plan)
            }
            let load = { (k: Int) throws(TesseraError) in try ResultSpool.load(records[k]?.spooled, segment: k) }
            switch destination {
            case .ladder(let ladder):
                _ = try Stopwatch.time(&timings.stitch) { () throws(TesseraError) in
                    try LadderPackager.package(plan: plan, loadSegment: load, audio: audio, into: ladder)
                }
                _ = try Stopwatch.time(&timings.verification) { () throws(TesseraError) in
                    try ladder.verify(plan: plan, audio: audio)
                }
            case .object(let object):
                var streamed = ObjectStitch.Timings()
                defer { (timings.stitch, timings.verification) = (timings.stitch + streamed.stitch, timings.verification + streamed.verification) }
                let client = try InputSource.client(for: object.location.description)
                object.hold(try ObjectStitch.stitch(plan: plan, loadSegment: load, audio: audio, expectation: Verifier.expectation(for: plan, audio: audio),
                                                    to: object.location, client: client, timings: &streamed))
            case .file(let temporary, _):
                _ = try Stopwatch.time(&timings.stitch) { () throws(TesseraError) in
                    try Stitcher.stitch(plan: plan, loadSegment: load, audio: audio, to: temporary)
                }
                _ = try Stopwatch.time(&timings.verification) { () throws(TesseraError) in
                    try Verifier.verify(temporary, Verifier.expectation(for: plan, audio: audio))
                }
            }
        } catch {
            record()
            destination.discard()
            if error.kind == .stitch, let k = error.segment, (try? store.job(id).state) == .stitching {
                // Encode that segment again rather than fail the job; as an attempt, so that a segment whose every
                // encode the stitch refuses fails its job after the attempts a lost lease is given.
                try store.redo(id, k, reason: error.problem, countingAttempt: true)
                try store.setState(id, to: .encoding)
                events.withValue { $0.append(.ready(id, plan, outstanding: [k])) }
            } else if error.kind != .input, let path = destination.faultPath,
                      let fault = LocalFault.output(path, needing: Self.outputEstimate(records.values)) {
                // Not the job's fault: it waits for space and is stitched again.
                events.withValue { $0.append(.stalled(id, fault)) }
            } else {
                events.withValue { $0.append(.failed(id, error.description)) }
            }
            return
        }
        record()
        // The input replaced while the audio was read, or another coordinator took the job over: this
        // output is not to be the job's.
        do throws(TesseraError) { try plan.checkInput() } catch {
            destination.discard()
            events.withValue { $0.append(.failed(id, error.description)) }
            return
        }
        guard try store.holds(id, coordinator: options.coordinatorID) else {
            destination.discard()
            events.withValue { $0.append(.released(id)) }
            return
        }
        // Canceled while stitching: the output never appears.
        guard try store.job(id).state == .stitching else {
            destination.discard()
            events.withValue { $0.append(.stitched(id)) }
            return
        }
        do throws(TesseraError) {
            try destination.commit(mode: job.spec.outputMode ?? options.outputMode)
        } catch {
            if let path = destination.faultPath, let fault = LocalFault.output(path, needing: 0) {
                events.withValue { $0.append(.stalled(id, fault)) }
            } else {
                events.withValue { $0.append(.failed(id, error.description)) }
            }
            return
        }
        do {
            try store.setState(id, to: .done)
        } catch {
            // Canceled between the check and the rename.
            destination.removePlaced()
            throw error
        }
        logger.info("job done", metadata: ["job.id": "\(id)", "output": "\(job.output)"])
        events.withValue { $0.append(.stitched(id)) }
    }
}

extension Coordinator {
    /// About what the output of these segments needs on disk: the video, and a margin for the audio and
    /// the MP4's index (a tenth, and half a megabyte). A ladder's results hold every rung, so its outputs are
    /// covered too (the audio once per rung only with `--audio-per-rung` or per-rung files, within the margin).
    static func outputEstimate(_ segments: some Collection<SegmentRecord>) -> Int64 {
        let video = segments.reduce(Int64(0)) { $0 + ($1.sizeBytes ?? 0) }
        return video + video / 10 + (512 << 10)
    }
}

extension SegmentRecord {
    /// Where its result lies in the spool, as recorded; nil when none is.
    var spooled: ResultSpool.Entry? {
        guard let path = resultPath, let checksum, let sizeBytes else { return nil }
        return ResultSpool.Entry(path: path, offset: resultOffset, size: Int(sizeBytes), checksum: checksum)
    }
}
