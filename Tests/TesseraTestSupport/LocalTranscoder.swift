import FFmpegKit
import Foundation
import Logging
import TesseraCore
@testable import TesseraEngine

/// A finished transcode.
package struct TranscodeReport: Sendable {
    package var plan: JobPlan
    package var verification: Verifier.Report
    package var stitch: Stitcher.Report
    package var audioCopied: Bool?
    package var wallSeconds: Double
    package var encodeSeconds: Double
    package var decodedFrames: Int
}

/// Runs the whole engine in this process with N parallel encoder threads: probe, plan, encode the
/// segments, encode the audio once, stitch, verify, and only then put the output in place.
/// A test helper only: `tessera transcode` runs `LocalTranscode` (a private cluster of worker processes),
/// which the option, two-pass, CLI and integration tests drive; this runs the same engine parts in one process.
package struct LocalTranscoder: Sendable {
    package var logger: Logger
    package var progress: @Sendable (TranscodeProgress) -> Void
    package var cancellation: CancellationFlag

    package init(logger: Logger = TestLogging.logger("tessera.engine"), cancellation: CancellationFlag = CancellationFlag(),
                 progress: @escaping @Sendable (TranscodeProgress) -> Void = { _ in }) {
        TestLogging.configured
        self.logger = logger
        self.cancellation = cancellation
        self.progress = progress
    }

    package func transcode(input: String, output: String, options: JobOptions) throws(TesseraError) -> TranscodeReport {
        let started = Date()
        try OutputPath.check(output, input: input)
        progress(TranscodeProgress(phase: .probing, segmentsDone: 0, segmentsTotal: 0, framesDone: 0, framesTotal: 0))
        let probe = try MediaProbe.probe(input)
        let plan = try JobPlanner.plan(probe, options: options)
        logger.info("planned", metadata: [
            "job.segments": "\(plan.cuts.segments.count)", "job.frames": "\(plan.cuts.frameCount)",
            "job.structure": "\(plan.cuts.structure.rawValue)", "job.preroll": "\(plan.cuts.totalPreRollPackets)",
        ])

        let spool = try Self.spool(near: output)
        defer { spool.remove() }
        let spooled = Locked<[Int: ResultSpool.Entry]>([:])

        // One part failing stops the others; the caller's own flag is only read.
        let stop = CancellationFlag()
        let caller = cancellation
        let halted: @Sendable () -> Bool = { caller.isCancelled || stop.isCancelled }

        // Audio: once for the whole file, beside the video encoders.
        let audioResult = Locked<Result<AudioTrack?, TesseraError>?>(nil)
        let audioDone = startThread(name: "tessera-audio") {
            let result = Result<AudioTrack?, TesseraError> { () throws(TesseraError) in
                try AudioTranscoder.run(plan, halted: halted)
            }
            if case .failure = result { stop.cancel() }
            audioResult.withValue { $0 = result }
        }

        let encoded = Result { () throws(TesseraError) in
            try encodeSegments(plan, workers: max(1, options.workers), spool: spool, spooled: spooled, halted: halted)
        }
        if case .failure = encoded { stop.cancel() }
        audioDone.wait()
        let audio: AudioTrack?
        switch audioResult.current {
        case .success(let track): audio = track
        // The audio's own error explains a job that stopped because of it.
        case .failure(let error) where error.kind != .canceled || caller.isCancelled: throw error
        case .failure, nil: audio = nil
        }
        let stats = try encoded.get()
        if caller.isCancelled { throw TesseraError.canceled }

        progress(TranscodeProgress(phase: .stitching, segmentsDone: plan.cuts.segments.count, segmentsTotal: plan.cuts.segments.count,
                                   framesDone: plan.outputFrameCount, framesTotal: plan.outputFrameCount))
        let temporary = OutputPath.temporary(for: output)
        do {
            let stitch = try Stitcher.stitch(plan: plan, loadSegment: { k throws(TesseraError) in
                try cancellation.check()
                return try ResultSpool.load(spooled.withValue { $0[k] }, segment: k)
            }, audio: audio, to: temporary)
            try cancellation.check()
            progress(TranscodeProgress(phase: .verifying, segmentsDone: plan.cuts.segments.count, segmentsTotal: plan.cuts.segments.count,
                                       framesDone: plan.outputFrameCount, framesTotal: plan.outputFrameCount))
            let verification = try Verifier.verify(temporary, Verifier.expectation(for: plan, audio: audio))
            try OutputPath.commit(temporary, to: output)
            progress(TranscodeProgress(phase: .done, segmentsDone: plan.cuts.segments.count, segmentsTotal: plan.cuts.segments.count,
                                       framesDone: plan.outputFrameCount, framesTotal: plan.outputFrameCount))
            return TranscodeReport(plan: plan, verification: verification, stitch: stitch, audioCopied: audio?.copied,
                                   wallSeconds: Date().timeIntervalSince(started), encodeSeconds: stats.encodeSeconds,
                                   decodedFrames: stats.decodedFrames)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    struct EncodeStats: Sendable {
        var encodeSeconds = 0.0
        var decodedFrames = 0
        var segmentsDone = 0
        var framesDone = 0
        var error: TesseraError?
    }

    /// A private spool beside the output (same file system, room for large jobs).
    static func spool(near output: String) throws(TesseraError) -> ResultSpool {
        let url = URL(fileURLWithPath: output)
        let directory = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tessera-spool-\(UUID().uuidString.prefix(8))")
        do { return try ResultSpool(directory: directory) } catch {
            throw .output(directory.path, "cannot create the spool (\(error))")
        }
    }

    /// Reads segments on demand on this thread and encodes them on `workers` threads; results go to the
    /// spool, where each lies in `spooled`.
    func encodeSegments(_ plan: JobPlan, workers: Int, spool: ResultSpool, spooled: Locked<[Int: ResultSpool.Entry]>,
                        halted: @escaping @Sendable () -> Bool) throws(TesseraError) -> EncodeStats {
        let queue = WorkQueue<SegmentTask>(capacity: workers)
        let state = Locked(EncodeStats())
        let total = plan.cuts.segments.count
        let frames = plan.outputFrameCount
        let progress = self.progress
        let logger = self.logger
        progress(TranscodeProgress(phase: .encoding, segmentsDone: 0, segmentsTotal: total, framesDone: 0, framesTotal: frames))
        let failed: @Sendable () -> Bool = { state.current.error != nil || halted() }
        var groups: [DispatchGroup] = []
        for n in 0..<min(workers, total) {
            groups.append(startThread(name: "tessera-encoder-\(n)") {
                while var task = queue.pop() {
                    do throws(TesseraError) {
                        // As a worker with one thread of its own.
                        task.setThreads(own: task.header.settings.threads)
                        let result = try SegmentEncoder.encode(task, cancelled: failed)
                        do {
                            let entry = try spool.append(result)
                            spooled.withValue { $0[result.header.index] = entry }
                        } catch {
                            throw TesseraError.output(spool.path, "cannot spool segment \(result.header.index) (\(error))")
                        }
                        let snapshot = state.withValue { s -> TranscodeProgress in
                            s.encodeSeconds += result.header.encodeSeconds
                            s.decodedFrames += result.header.decodedFrames
                            s.segmentsDone += 1
                            s.framesDone += result.header.frameCount
                            return TranscodeProgress(phase: .encoding, segmentsDone: s.segmentsDone, segmentsTotal: total,
                                                     framesDone: s.framesDone, framesTotal: frames)
                        }
                        logger.debug("segment encoded", metadata: ["segment.index": "\(task.header.segment.index)"])
                        progress(snapshot)
                    } catch {
                        state.withValue { if $0.error == nil { $0.error = error } }
                        queue.close(discarding: true)
                    }
                }
            })
        }
        var readError: TesseraError?
        do throws(TesseraError) {
            // One segment at a time, on demand: memory stays bounded whatever the input's length.
            let reader = try SegmentReader(plan: plan)
            for segment in plan.cuts.segments {
                if halted() { throw TesseraError.canceled }
                let task = try reader.task(for: segment)
                guard queue.push(task) else { throw state.current.error ?? TesseraError(.segment, "job", "canceled") }
            }
        } catch {
            readError = error
        }
        queue.close(discarding: readError != nil)
        groups.forEach { $0.wait() }
        let result = state.current
        if let error = result.error ?? readError { throw error }
        return result
    }
}
