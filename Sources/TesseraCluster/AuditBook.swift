import TesseraCore

/// Audit by re-encoding, decided apart from what the coordinator does: which results are audited, which worker
/// encodes a segment again, and what the compared encodes say. A result is audited at the rate its job asks for
/// (a secret random draw the caller makes), and always while its worker key has had fewer than `firstResults`
/// audited. The audit task is the same task under another lease, sent to a worker with another key and the same
/// encoder profile (libraries and threads: libx264's output depends on its thread count). Two equal encodes close
/// the audit; two that differ call for a third from yet another key, and the odd one out is the culprit. With no
/// eligible worker connected for `wait` seconds, the audit is given up and the job goes on. No I/O.
struct AuditBook {
    typealias SegmentRef = ClusterMessage.SegmentRef

    struct Configuration: Equatable {
        /// The share of results audited when the job says nothing (0 off, 1 every result).
        var rate = 0.0
        /// Results of each new key audited whatever the rate.
        var firstResults = 3
        /// Seconds an audit waits with no eligible worker connected before it is given up.
        var wait = 10.0
    }

    /// One encode of the segment: who made it and what it holds (`AuditContent`).
    struct Encode: Equatable {
        var worker: String
        var identity: String
        var content: [UInt8]
        var encodeSeconds: Double
    }

    struct Audit: Equatable {
        /// The original result's attempt, which the audit task repeats.
        var attempt: Int
        /// The encoder profile every encode must share.
        var profile: String
        /// The original first (its result is spooled), then the audits'.
        var encodes: [Encode]
        /// The audit task in flight, and when it went out.
        var lease: (worker: String, token: String, since: Double)?
        /// Since when no eligible worker is connected; nil while one is.
        var lonelySince: Double?

        static func == (a: Audit, b: Audit) -> Bool {
            a.attempt == b.attempt && a.profile == b.profile && a.encodes == b.encodes && a.lease?.worker == b.lease?.worker
                && a.lease?.token == b.lease?.token && a.lease?.since == b.lease?.since && a.lonelySince == b.lonelySince
        }
    }

    /// A worker an audit task may go to.
    struct Candidate: Equatable {
        var worker: String
        var identity: String
        var profile: String
        var free: Int
    }

    /// What an audit's encodes say.
    enum Verdict: Equatable {
        /// Still open: another encode is due.
        case open
        /// The audit encode differs from the original: a third encode by yet another key decides.
        case disputed(original: Encode, auditor: Encode)
        /// The audit encode matched the original.
        case matched(original: Encode, auditor: Encode)
        /// Two of three agree; `culprit` disagreed. `originalWrong`: the spooled result is the culprit's, and
        /// the segment is encoded again.
        case decided(culprit: Encode, agreeing: [Encode], originalWrong: Bool)
        /// Three encodes, all different: no one is blamed, the segment is encoded again.
        case undecided([Encode])
    }

    /// What an audit given up leaves: the segment keeps the original's result unaudited, or (after a mismatch no
    /// third key could decide) keeps it with the disagreement noted.
    struct Waiver: Equatable {
        var segment: SegmentRef
        var encodes: [Encode]
    }

    /// What audits cost a job, for its events and metrics.
    struct Cost: Equatable {
        var audited = 0
        var extraSeconds = 0.0
        var mismatches = 0
        var waived = 0
        /// Workers quarantined by the job's audits, in order.
        var quarantined: [String] = []
    }

    /// A worker's capability saying its encodes with threads repeat when the task asks.
    static let repeatableCapability = "repeatable"

    /// What must be alike for two workers' encodes to be alike (library versions, CPU features, libx264 threads);
    /// nil for a worker whose results are not audited: one of an earlier build with more than one libx264 thread,
    /// whose bytes did not repeat (`AuditDeterminismTests`).
    static func profile(_ capabilities: [String: String]) -> String? {
        guard capabilities["threads"] == "1" || capabilities[repeatableCapability] == "1" else { return nil }
        // Not part of the profile: with one thread both builds give the same bytes.
        return capabilities.filter { $0.key != repeatableCapability }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value)" }.joined(separator: ";")
    }

    var configuration: Configuration
    private(set) var open: [SegmentRef: Audit] = [:]
    /// Each known key's results audited, open or closed (the first-results rule).
    private(set) var audited: [String: Int] = [:]
    private(set) var costs: [String: Cost] = [:]

    init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A key's record as the store keeps it (read when its worker joins).
    mutating func known(_ identity: String, audited count: Int) {
        audited[identity] = max(audited[identity] ?? 0, count)
    }

    /// Whether a result of `identity` is audited, given a uniform draw in [0, 1) and the job's rate (nil: the
    /// configured one).
    func shouldAudit(_ identity: String, draw: Double, rate: Double?) -> Bool {
        let rate = rate ?? configuration.rate
        guard rate > 0 else { return false }
        if (audited[identity] ?? 0) < configuration.firstResults { return true }
        return draw < rate
    }

    /// An original result arrived and is audited.
    mutating func opened(_ segment: SegmentRef, attempt: Int, profile: String, original: Encode) {
        open[segment] = Audit(attempt: attempt, profile: profile, encodes: [original])
        audited[original.identity, default: 0] += 1
        costs[segment.jobID, default: Cost()].audited += 1
    }

    /// Whether any audit of `job` is open: its stitch waits.
    func holds(_ job: String) -> Bool { open.keys.contains { $0.jobID == job } }

    /// Audits waiting for a worker, oldest segments first.
    var waiting: [SegmentRef] {
        open.filter { $0.value.lease == nil }.keys.sorted { ($0.jobID, $0.index) < ($1.jobID, $1.index) }
    }

    func eligible(_ audit: Audit, _ candidate: Candidate) -> Bool {
        !candidate.profile.isEmpty && candidate.profile == audit.profile && !audit.encodes.contains { $0.identity == candidate.identity }
    }

    /// The worker among `candidates` (connected workers, with their free slots) that encodes `segment` again;
    /// the one with most free slots, then by id.
    func pick(_ segment: SegmentRef, among candidates: [Candidate]) -> String? {
        guard let audit = open[segment], audit.lease == nil else { return nil }
        return candidates.filter { $0.free > 0 && eligible(audit, $0) }
            .sorted { ($1.free, $0.worker) < ($0.free, $1.worker) }.first?.worker
    }

    /// The audit task went out.
    mutating func assigned(_ segment: SegmentRef, worker: String, token: String, now: Double = 0) {
        open[segment]?.lease = (worker, token, now)
        open[segment]?.lonelySince = nil
    }

    /// Whether `token` from `worker` answers an audit task (not the segment's lease in the store).
    func isAuditLease(_ segment: SegmentRef, worker: String, token: String) -> Bool {
        guard let lease = open[segment]?.lease else { return false }
        return lease.worker == worker && lease.token == token
    }

    /// The audit task ended without an encode (a failure, a busy reply, its worker gone): another worker gets it.
    mutating func unanswered(_ segment: SegmentRef) {
        open[segment]?.lease = nil
    }

    /// Audit tasks no longer in flight to their worker (it left, or rejoined without them) go back to waiting, and
    /// so do those out longer than `timeout` seconds (returned: the caller frees their worker's slot).
    mutating func leasesLost(inFlight: (SegmentRef, _ worker: String, _ token: String) -> Bool, now: Double = 0,
                             timeout: Double = .infinity) -> [(segment: SegmentRef, worker: String)] {
        var expired: [(segment: SegmentRef, worker: String)] = []
        for (segment, audit) in open {
            guard let lease = audit.lease else { continue }
            if !inFlight(segment, lease.worker, lease.token) {
                open[segment]?.lease = nil
            } else if now - lease.since > timeout {
                open[segment]?.lease = nil
                expired.append((segment, lease.worker))
            }
        }
        return expired
    }

    /// The audit task's encode arrived.
    mutating func answered(_ segment: SegmentRef, with encode: Encode) -> Verdict {
        guard var audit = open[segment] else { return .open }
        audit.lease = nil
        audit.encodes.append(encode)
        costs[segment.jobID, default: Cost()].extraSeconds += encode.encodeSeconds
        let e = audit.encodes
        let verdict: Verdict
        switch e.count {
        case 2 where e[0].content == e[1].content:
            verdict = .matched(original: e[0], auditor: e[1])
        case 2:
            costs[segment.jobID, default: Cost()].mismatches += 1
            verdict = .disputed(original: e[0], auditor: e[1])
        case _ where e[2].content == e[0].content:
            verdict = .decided(culprit: e[1], agreeing: [e[0], e[2]], originalWrong: false)
        case _ where e[2].content == e[1].content:
            verdict = .decided(culprit: e[0], agreeing: [e[1], e[2]], originalWrong: true)
        default:
            verdict = .undecided(e)
        }
        if case .disputed = verdict { open[segment] = audit } else { open[segment] = nil }
        if case .decided(let culprit, _, _) = verdict { costs[segment.jobID, default: Cost()].quarantined.append(culprit.worker) }
        return verdict
    }

    /// Audits that have waited `wait` seconds with no eligible worker among `connected`: given up (closed).
    mutating func waive(connected: [Candidate], now: Double) -> [Waiver] {
        var waived: [Waiver] = []
        for segment in waiting {
            guard let audit = open[segment] else { continue }
            if connected.contains(where: { eligible(audit, $0) }) {
                open[segment]?.lonelySince = nil
                continue
            }
            let since = audit.lonelySince ?? now
            open[segment]?.lonelySince = since
            guard now - since >= configuration.wait else { continue }
            open[segment] = nil
            costs[segment.jobID, default: Cost()].waived += 1
            waived.append(Waiver(segment: segment, encodes: audit.encodes))
        }
        return waived
    }

    /// A key found wrong: audits where it is the original are settled against it (the segment is encoded again);
    /// its encodes in others' audits are dropped (its audit tasks go back with its
    /// leases, `leasesLost`). Returns the segments whose original was its.
    mutating func culpritFound(_ identity: String) -> [SegmentRef] {
        var redo: [SegmentRef] = []
        for (segment, audit) in open {
            if audit.encodes.first?.identity == identity {
                open[segment] = nil
                redo.append(segment)
            } else if audit.encodes.contains(where: { $0.identity == identity }) {
                // Its encode in an audit of another's result is worth nothing now: another key encodes it.
                open[segment]?.encodes.removeAll { $0.identity == identity }
            }
        }
        return redo.sorted { ($0.jobID, $0.index) < ($1.jobID, $1.index) }
    }

    /// The job ended or went elsewhere: its audits are forgotten. Returns its cost.
    mutating func jobDropped(_ job: String) -> Cost? {
        open = open.filter { $0.key.jobID != job }
        return costs.removeValue(forKey: job)
    }

    /// The segment is encoded again (found damaged at the stitch, or its worker quarantined): its audit is moot.
    mutating func segmentReopened(_ segment: SegmentRef) {
        open[segment] = nil
    }
}
