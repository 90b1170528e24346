import TesseraCore

/// A fault a test injects into a worker: its result damaged the way a broken or compromised host would return
/// it, well-formed (the checksum is computed after the damage, the headers untouched), so every check before
/// the stitch passes and only an audit finds it.
enum WorkerFault {
    /// The result with 16 bytes inverted in the middle of its largest packet.
    static func damaged(_ segment: EncodedSegment) -> EncodedSegment {
        var damaged = segment
        guard let n = damaged.packets.indices.max(by: { damaged.packets[$0].data.count < damaged.packets[$1].data.count }) else { return segment }
        let data = damaged.packets[n].data
        let start = max(0, data.count / 2 - 8), end = min(data.count, start + 16)
        for i in start..<end { damaged.packets[n].data[i] ^= 0xFF }
        return damaged
    }

    /// The task with its source URL's signature damaged in its last hex digit: S3 refuses it (403) as it refuses an
    /// expired or revoked URL.
    static func tampered(_ task: SegmentTask) -> SegmentTask {
        guard var source = task.header.source, let last = source.url.last else { return task }
        source.url = String(source.url.dropLast()) + (last == "0" ? "1" : "0")
        var tampered = task
        tampered.header.source = source
        return tampered
    }

    /// The task expecting its first packet one byte longer than probed: what it reads is not what it expects.
    static func misprobed(_ task: SegmentTask) -> SegmentTask {
        guard var source = task.header.source, !source.sizes.isEmpty else { return task }
        source.sizes[0] += 1
        var misprobed = task
        misprobed.header.source = source
        return misprobed
    }

    /// The task without its pass: a two-pass job's first pass encoded as one pass, as a worker that does not know
    /// passes would, returning packets and no statistics.
    static func passIgnored(_ task: SegmentTask) -> SegmentTask {
        var ignored = task
        ignored.header.pass = nil
        if var rungs = ignored.header.rungs {
            for r in rungs.indices { rungs[r].pass = nil }
            ignored.header.rungs = rungs
        }
        return ignored
    }
}
