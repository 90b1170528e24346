import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore

extension JobPlan {
    /// Which pass its segments encode, for the state machine.
    var pass: CoordinatorStateMachine.Pass {
        guard settings.twoPass else { return .only }
        return secondPass == nil ? .first : .second
    }
}

extension Coordinator {
    /// A two-pass job whose first pass is done: reads every segment's statistics from the spool, allocates each
    /// output's bits over the segments (a ladder's rungs each their own, at their own bitrate), records each
    /// segment's second pass and sends them back to pending (one transaction), and loads the job again for its
    /// second pass.
    func allocate(_ id: String, _ plan: JobPlan, _ store: any CoordinatorStore) throws {
        guard plan.settings.bitrate != nil else { return }
        let records = Dictionary(uniqueKeysWithValues: try store.segments(id).map { ($0.index, $0) })
        let rungs = plan.rungCount
        // By rung, then segment.
        var outputs = [[FirstPassOutput]](repeating: [], count: rungs)
        for segment in plan.cuts.segments {
            let result: EncodedSegment
            do throws(TesseraError) {
                result = try ResultSpool.load(records[segment.index]?.spooled, segment: segment.index)
            } catch {
                // A damaged or missing first pass is encoded again, as a damaged result is.
                try store.redo(id, segment.index, reason: error.problem)
                events.withValue { $0.append(.ready(id, plan, outstanding: [segment.index])) }
                return
            }
            let found = result.header.rungs?.compactMap(\.firstPass) ?? [result.header.firstPass].compactMap { $0 }
            guard result.header.firstPass != nil, found.count == rungs else {
                // The encode's fault: again as an attempt, so that one that never returns statistics fails its job.
                try store.redo(id, segment.index, reason: "its first pass returned no statistics", countingAttempt: true)
                events.withValue { $0.append(.ready(id, plan, outstanding: [segment.index])) }
                return
            }
            for (r, output) in found.enumerated() { outputs[r].append(output) }
        }
        var allocations: [BitAllocation.Result] = []
        for r in 0..<rungs {
            let settings = plan.forRung(r).settings
            guard let bitrate = settings.bitrate else { return }
            do throws(TwoPassError) {
                // x264's and x265's statistics, or the sizes of Tessera's own AV1 first pass.
                if settings.videoCodec == .av1 {
                    let sizes = try outputs[r].map { output throws(TwoPassError) in try AV1FirstPass(parsing: output.stats) }
                    allocations.append(try BitAllocation.allocate(av1: sizes, bitrate: bitrate))
                } else {
                    let stats = try outputs[r].map { output throws(TwoPassError) in try FirstPassStats(parsing: output.stats) }
                    allocations.append(try BitAllocation.allocate(stats, bitrate: bitrate, maxrate: settings.maxrate))
                }
            } catch {
                let what = plan.ladder.map { "--ladder rung \($0.names[r]) at \(bitrate) b/s" } ?? "--bitrate \(bitrate)"
                events.withValue { $0.append(.failed(id, "\(what): \(error)")) }
                return
            }
        }
        var passes: [Int: [PassInput]] = [:]
        for (n, segment) in plan.cuts.segments.enumerated() {
            passes[segment.index] = (0..<rungs).map { r in
                PassInput(pass: 2, bitrate: allocations[r].bitrates[n], stats: outputs[r][n].stats,
                          macroblockTree: outputs[r][n].macroblockTree)
            }
        }
        guard try store.startSecondPass(id, coordinator: options.coordinatorID, passes) else {
            events.withValue { $0.append(.released(id)) }
            return
        }
        logger.info("bits allocated", metadata: ["job.id": "\(id)", "job.segments": "\(passes.count)",
                                                 "job.bitrates": "\(allocations.map { $0.bitrates.map { $0 / 1000 } })"])
        var second = plan
        second.secondPass = passes
        events.withValue { $0.append(.ready(id, second, outstanding: Set(passes.keys))) }
    }
}
