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
    /// A two-pass job whose first pass is done: reads every segment's statistics from the spool, allocates the
    /// file's bits over the segments, records each segment's second pass and sends them back to pending (one
    /// transaction), and loads the job again for its second pass.
    func allocate(_ id: String, _ plan: JobPlan, _ store: any CoordinatorStore) throws {
        guard let bitrate = plan.settings.bitrate else { return }
        let records = Dictionary(uniqueKeysWithValues: try store.segments(id).map { ($0.index, $0) })
        var outputs: [FirstPassOutput] = []
        var stats: [FirstPassStats] = []
        for segment in plan.cuts.segments {
            let output: FirstPassOutput
            do throws(TesseraError) {
                let result = try ResultSpool.load(records[segment.index]?.spooled, segment: segment.index)
                guard let first = result.header.firstPass else {
                    throw TesseraError(.segment, segment: segment.index, "its first pass returned no statistics")
                }
                output = first
            } catch {
                // A damaged or missing first pass is encoded again, as a damaged result is.
                try store.redo(id, segment.index, reason: error.problem)
                events.withValue { $0.append(.ready(id, plan, outstanding: [segment.index])) }
                return
            }
            do {
                stats.append(try FirstPassStats(parsing: output.stats))
            } catch {
                events.withValue { $0.append(.failed(id, "segment \(segment.index): \(error)")) }
                return
            }
            outputs.append(output)
        }
        let allocation: BitAllocation.Result
        do {
            allocation = try BitAllocation.allocate(stats, bitrate: bitrate, maxrate: plan.settings.maxrate)
        } catch {
            events.withValue { $0.append(.failed(id, "--bitrate \(bitrate): \(error)")) }
            return
        }
        var passes: [Int: PassInput] = [:]
        for (n, segment) in plan.cuts.segments.enumerated() {
            passes[segment.index] = PassInput(pass: 2, bitrate: allocation.bitrates[n], stats: outputs[n].stats,
                                              macroblockTree: outputs[n].macroblockTree)
        }
        guard try store.startSecondPass(id, coordinator: options.coordinatorID, passes) else {
            events.withValue { $0.append(.released(id)) }
            return
        }
        logger.info("bits allocated", metadata: ["job.id": "\(id)", "job.segments": "\(passes.count)",
                                                 "job.bitrates": "\(allocation.bitrates.map { $0 / 1000 })"])
        var second = plan
        second.secondPass = passes
        events.withValue { $0.append(.ready(id, second, outstanding: Set(passes.keys))) }
    }
}
