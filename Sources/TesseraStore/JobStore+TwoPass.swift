import TesseraCore

extension JobStore {
    /// Starts a two-pass job's second pass: records each segment's inputs (one per rung, a single output's one)
    /// and sends every done segment back to pending, in one transaction. False (nothing recorded) when the job
    /// is not encoding under `coordinator`, or its second pass was already recorded.
    public func startSecondPass(_ jobID: String, coordinator: String, _ passes: [Int: [PassInput]]) throws(StoreError) -> Bool {
        try transaction("recording the second pass") {
            let job = try db.query("SELECT state, coordinator FROM jobs WHERE id = $1::uuid FOR UPDATE", [jobID]).first
            guard job?.string("state") == JobState.encoding.rawValue, job?.string("coordinator") == coordinator else { return false }
            // A row at a time: the MB-tree files are megabytes each, too big to go through an array literal.
            for (index, rungs) in passes.sorted(by: { $0.key < $1.key }) {
                for (rung, pass) in rungs.enumerated() {
                    let inserted = try db.query("""
                        INSERT INTO segment_passes (job_id, index, rung, bitrate, stats, macroblock_tree)
                        VALUES ($1::uuid, $2, $3, $4, $5, $6) ON CONFLICT (job_id, index, rung) DO NOTHING
                        """, [jobID, String(index), String(rung), String(pass.bitrate ?? 0), pass.stats ?? "",
                              pass.macroblockTree.hexString])
                    guard inserted.affected == 1 else { throw StoreError("job \(jobID): second pass already recorded") }
                }
            }
            try db.query("""
                UPDATE segments SET state = 'pending', result_path = NULL, result_offset = 0, checksum = NULL, size_bytes = NULL,
                    last_error = NULL, attempts = 0
                WHERE job_id = $1::uuid AND state = 'done'
                """, [jobID])
            return true
        }
    }

    /// A two-pass job's second-pass inputs by segment, one per rung in the ladder's order; nil while its first
    /// pass runs.
    public func secondPass(_ jobID: String) throws(StoreError) -> [Int: [PassInput]]? {
        let rows = try run("reading the second pass", """
            SELECT index, rung, bitrate, stats, macroblock_tree FROM segment_passes WHERE job_id = $1::uuid ORDER BY index, rung
            """, [jobID]).all
        guard !rows.isEmpty else { return nil }
        var passes: [Int: [PassInput]] = [:]
        for row in rows {
            guard let index = row.int("index"), let rung = row.int("rung"), rung == passes[index]?.count ?? 0,
                  let bitrate = row.int("bitrate"), let tree = [UInt8](hex: row.string("macroblock_tree")) else {
                throw StoreError("job \(jobID): a damaged second-pass row")
            }
            passes[index, default: []].append(PassInput(pass: 2, bitrate: bitrate, stats: row.string("stats"), macroblockTree: tree))
        }
        return passes
    }
}
