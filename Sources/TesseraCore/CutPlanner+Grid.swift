extension CutPlanner {
    /// A ladder job's plan: packaging cuts at the first frame at or after each multiple of `seconds` (from the
    /// first shown frame), and segments made of whole runs of them, so that every segment starts on a packaging
    /// cut. About `options.segmentSeconds` long when asked for; otherwise enough segments to keep every encoder
    /// busy twice over, and none longer than a minute. `segmentPerCut`: every packaging segment is a segment of its own,
    /// for an encoder that cannot be told where to put a keyframe (SVT-AV1 through FFmpeg 5.1).
    public func planOnGrid(seconds: Double, _ options: PlanOptions, segmentPerCut: Bool = false) -> CutPlan {
        let grid = gridPositions(seconds: seconds)
        let pieces = grid.count + 1
        let duration = Double(frameCount) / framesPerSecond
        let wanted: Int
        if let length = options.segmentSeconds, length > 0 {
            wanted = Int((duration / max(length, seconds)).rounded())
        } else {
            wanted = max(options.minimumSegments, Int((duration / 60).rounded(.up)))
        }
        let count = segmentPerCut ? pieces : min(pieces, max(1, wanted))
        // Runs of packaging segments as even as whole runs allow.
        var cuts = [0]
        for k in 1..<max(1, count) {
            let boundary = Int((Double(k) * Double(pieces) / Double(count)).rounded())
            let position = grid[boundary - 1]
            if position > cuts.last! { cuts.append(position) }
        }
        var plan = makePlan(cuts: cuts, target: frameCount / max(1, cuts.count))
        plan.packagingCuts = grid.map { pts(atDisplayPosition: $0) }
        return plan
    }

    /// Display positions of the first frame at or after each multiple of `seconds` past the first frame.
    func gridPositions(seconds: Double) -> [Int] {
        guard seconds > 0, frameCount > 1 else { return [] }
        let first = pts(atDisplayPosition: 0)
        var positions: [Int] = []
        var n = 1
        var j = 1
        while j < frameCount {
            let target = first + Int64((Double(n) * seconds / timeBase.doubleValue).rounded(.up))
            while j < frameCount, pts(atDisplayPosition: j) < target { j += 1 }
            guard j < frameCount else { break }
            if positions.last != j { positions.append(j) }
            n += 1
        }
        // A last piece under half a second (or half a segment) joins the one before: players dislike slivers.
        if let last = positions.last, timeBase.seconds(endPTS - pts(atDisplayPosition: last)) < min(0.5, seconds / 2) {
            positions.removeLast()
        }
        return positions
    }
}
