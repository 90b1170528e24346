import TesseraCore

extension EncodedSegment {
    /// The result as a stitch takes it: in place `k`, with the plan's outputs and frames and, given `reference`, the
    /// job's headers; otherwise a `.stitch` error naming the segment, so that it is encoded again.
    func checked(_ k: Int, plan: JobPlan, reference: [UInt8]?) throws(TesseraError) -> EncodedSegment {
        guard header.index == k else { throw TesseraError(.stitch, segment: k, "spool holds segment \(header.index) in its place") }
        guard rungCount == plan.rungCount else {
            throw TesseraError(.stitch, segment: k, "holds \(rungCount) rungs, the plan has \(plan.rungCount)")
        }
        if let reference, header.extradata != reference {
            throw TesseraError(.stitch, segment: k,
                               "SPS/PPS differ from segment 0 (\(header.extradata.count) vs \(reference.count) bytes): encoded with other settings or another libx264 build")
        }
        guard header.frameCount == plan.outputFrames(k) else {
            throw TesseraError(.stitch, segment: k, "has \(header.frameCount) frames, the plan has \(plan.outputFrames(k))")
        }
        return self
    }
}
