/// The messages coordinator and workers exchange over ZeroMQ. Each is one header frame
///
///     "TSR" version:u8 kind:u8 JSON
///
/// optionally followed by one payload frame (a TSEG task or TRES result blob). Versioned and
/// self-describing: a receiver refuses what it does not understand and never crashes on it.
public enum ClusterMessage: Hashable, Sendable {
    /// 3: a task may carry a ladder's rungs and forced keyframes, which a worker of version 2 would ignore.
    /// 4: a ladder's rungs may each carry a pass, and a first pass's result each rung's statistics.
    /// 5: a task's settings may name a codec (HEVC, AV1), which a worker of version 4 would encode as H.264.
    public static let version: UInt8 = 5
    /// The version byte of a refusal: readable by every release from version 3 on, whatever it speaks.
    static let anyVersion: UInt8 = 0
    static let magic: [UInt8] = Array("TSR".utf8)

    /// Worker → coordinator: I am here, with these capabilities, and can take `slots` tasks at once.
    case ready(Ready)
    /// Both ways, every heartbeat interval (the Paranoid Pirate pattern): I am alive.
    case heartbeat
    /// Coordinator → worker: encode this segment.
    case task(TaskHeader, payload: [UInt8])
    /// Worker → coordinator: the encoded segment.
    case result(ResultHeader, payload: [UInt8])
    /// Worker → coordinator: the segment could not be encoded.
    case failure(Failure)
    /// Coordinator → worker: stop what you are doing for this job.
    case cancel(jobID: String)
    /// Worker → coordinator: I am leaving (SIGTERM); these tasks go back.
    case bye(handedBack: [SegmentRef])
    /// Worker → coordinator: no free slot for this task; its lease goes back, no attempt counted.
    case busy(LeaseRef)
    /// Worker → coordinator: how far a task's encode is (not an answer: the task goes on).
    case progress(Progress)
    /// Coordinator → worker: what you sent is refused, and why (sent with version byte 0, so that a worker of
    /// another release can still read it).
    case refused(Refusal)

    public struct Refusal: Codable, Hashable, Sendable {
        public enum Reason: String, Codable, Hashable, Sendable {
            /// The worker speaks another wire protocol version.
            case wireVersion = "wire_version"
            /// The worker's id joined first with another key.
            case idBoundToAnotherKey = "id_bound_to_another_key"
            /// The worker's key is no longer authorized.
            case keyNotAuthorized = "key_not_authorized"
            /// The worker sent too many refused messages.
            case quarantined
        }
        public var reason: Reason
        /// One line for the worker's log.
        public var detail: String

        public init(_ reason: Reason, _ detail: String) {
            self.reason = reason
            self.detail = detail
        }
    }

    public struct Progress: Codable, Hashable, Sendable {
        public var lease: LeaseRef
        /// Source frames of the segment given to the encoder so far.
        public var frames: Int

        public init(lease: LeaseRef, frames: Int) {
            self.lease = lease
            self.frames = frames
        }
    }

    public struct Ready: Codable, Hashable, Sendable {
        public var workerID: String
        public var host: String
        public var slots: Int
        /// Library versions and threads ("libavcodec", "libx264", "threads"): results are only accepted
        /// from encoders that produce the job's headers.
        public var capabilities: [String: String]
        /// Tasks it is still encoding (after a reconnect), with their leases' tokens; any other lease in
        /// its name is void.
        public var inFlight: [LeaseRef]

        public init(workerID: String, host: String, slots: Int, capabilities: [String: String], inFlight: [LeaseRef] = []) {
            self.workerID = workerID
            self.host = host
            self.slots = slots
            self.capabilities = capabilities
            self.inFlight = inFlight
        }
    }

    public struct SegmentRef: Codable, Hashable, Sendable {
        public var jobID: String
        public var index: Int

        public init(jobID: String, index: Int) {
            self.jobID = jobID
            self.index = index
        }
    }

    /// A segment under one lease: the lease's token, which only the task sent under it carries.
    public struct LeaseRef: Codable, Hashable, Sendable {
        public var segment: SegmentRef
        public var token: String

        public init(segment: SegmentRef, token: String) {
            self.segment = segment
            self.token = token
        }
    }

    public struct TaskHeader: Codable, Hashable, Sendable {
        public var segment: SegmentRef
        /// The lease's attempt number (for the logs).
        public var attempt: Int
        /// The lease's token: a result counts only with it, from the worker the task was sent to.
        public var token: String

        public init(segment: SegmentRef, attempt: Int, token: String) {
            self.segment = segment
            self.attempt = attempt
            self.token = token
        }
    }

    public struct ResultHeader: Codable, Hashable, Sendable {
        public var segment: SegmentRef
        public var attempt: Int
        /// The task's lease token.
        public var token: String
        /// The payload's XXH64 (`PayloadChecksum`, as its trailer carries it), recorded in the store.
        public var checksum: String

        public init(segment: SegmentRef, attempt: Int, token: String, checksum: String) {
            self.segment = segment
            self.attempt = attempt
            self.token = token
            self.checksum = checksum
        }
    }

    public struct Failure: Codable, Hashable, Sendable {
        public var segment: SegmentRef
        public var attempt: Int
        /// The task's lease token.
        public var token: String
        public var error: String
        /// What kind of failure, when the worker knows (nil: the encode failed); a code a peer does not know is kept.
        public var code: Code?

        /// A failure code: a string on the wire, so that a newer peer's codes still decode.
        public struct Code: RawRepresentable, Codable, Hashable, Sendable {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// The task's source bytes could not be read from object storage (refused, expired, unreachable).
            public static let sourceUnreadable = Code(rawValue: "source_unreadable")
            /// The task's source bytes were read but are not the packets the coordinator's probe found there: the job's
            /// tasks carry their packets from then on.
            public static let sourceNotAsProbed = Code(rawValue: "source_not_as_probed")
        }

        public init(segment: SegmentRef, attempt: Int, token: String, error: String, code: Code? = nil) {
            self.segment = segment
            self.attempt = attempt
            self.token = token
            self.error = error
            self.code = code
        }
    }

    enum Kind: UInt8 {
        case ready = 1, heartbeat, task, result, failure, cancel, bye, busy, progress, refused
    }

    struct JobRef: Codable { var jobID: String }
    struct HandBack: Codable { var handedBack: [SegmentRef] }
    struct Empty: Codable {}

    /// The frames to send.
    public func frames() -> [[UInt8]] {
        func header<T: Encodable>(_ kind: Kind, _ body: T) -> [UInt8] {
            Self.magic + [Self.version, kind.rawValue] + CanonicalJSON.data(body)
        }
        switch self {
        case .ready(let r): return [header(.ready, r)]
        case .heartbeat: return [header(.heartbeat, Empty())]
        case .task(let t, let payload): return [header(.task, t), payload]
        case .result(let r, let payload): return [header(.result, r), payload]
        case .failure(let f): return [header(.failure, f)]
        case .cancel(let job): return [header(.cancel, JobRef(jobID: job))]
        case .bye(let back): return [header(.bye, HandBack(handedBack: back))]
        case .busy(let lease): return [header(.busy, lease)]
        case .progress(let progress): return [header(.progress, progress)]
        case .refused(let refusal): return [Self.magic + [Self.anyVersion, Kind.refused.rawValue] + CanonicalJSON.data(refusal)]
        }
    }

    /// Parses the frames of one message (without a ROUTER's identity frame).
    public init(frames: [[UInt8]]) throws(WireError) {
        guard let head = frames.first else { throw .empty }
        try self.init(head: head, frameCount: frames.count, payload: frames.count > 1 ? frames[1] : [])
    }

    /// Parses a message from its header frame, the `payloadFrames` after it left where they were
    /// received: a task's or result's payload (megabytes) is read in place by the caller, and the
    /// message holds an empty one.
    public init(head: [UInt8], payloadFrames: Int) throws(WireError) {
        try self.init(head: head, frameCount: 1 + payloadFrames, payload: [])
    }

    init(head: [UInt8], frameCount: Int, payload: [UInt8]) throws(WireError) {
        guard head.count >= 5, Array(head[0..<3]) == Self.magic else { throw .notTessera }
        guard head[3] == Self.version || (head[3] == Self.anyVersion && head[4] == Kind.refused.rawValue) else {
            throw .unsupportedVersion(head[3])
        }
        guard let kind = Kind(rawValue: head[4]) else { throw .unknownKind(head[4]) }
        let json = Array(head[5...])
        let expectsPayload = kind == .task || kind == .result
        guard frameCount == (expectsPayload ? 2 : 1) else { throw .wrongFrameCount(kind: "\(kind)", frameCount) }
        func body<T: Decodable>(_ type: T.Type) throws(WireError) -> T {
            do { return try CanonicalJSON.decode(type, from: json) } catch { throw .badHeader("\(kind)") }
        }
        switch kind {
        case .ready:
            let ready = try body(Ready.self)
            guard ready.slots > 0, !ready.workerID.isEmpty else { throw .badHeader("ready") }
            self = .ready(ready)
        case .heartbeat: self = .heartbeat
        case .task: self = .task(try body(TaskHeader.self), payload: payload)
        case .result: self = .result(try body(ResultHeader.self), payload: payload)
        case .failure: self = .failure(try body(Failure.self))
        case .cancel: self = .cancel(jobID: try body(JobRef.self).jobID)
        case .bye: self = .bye(handedBack: try body(HandBack.self).handedBack)
        case .busy: self = .busy(try body(LeaseRef.self))
        case .progress:
            let progress = try body(Progress.self)
            guard progress.frames >= 0 else { throw .badHeader("progress") }
            self = .progress(progress)
        case .refused: self = .refused(try body(Refusal.self))
        }
    }
}

extension ClusterMessage {
    /// The lease a task, result or failure is about.
    public var lease: LeaseRef? {
        switch self {
        case .result(let header, _): return LeaseRef(segment: header.segment, token: header.token)
        case .failure(let failure): return LeaseRef(segment: failure.segment, token: failure.token)
        case .task(let header, _): return LeaseRef(segment: header.segment, token: header.token)
        case .busy(let lease): return lease
        default: return nil
        }
    }

    /// The segment a result or failure is about.
    public var segment: SegmentRef? {
        switch self {
        case .result(let header, _): return header.segment
        case .failure(let failure): return failure.segment
        case .task(let header, _): return header.segment
        case .busy(let lease): return lease.segment
        default: return nil
        }
    }
}

public enum WireError: Error, Equatable, CustomStringConvertible {
    case empty
    case notTessera
    case unsupportedVersion(UInt8)
    case unknownKind(UInt8)
    case wrongFrameCount(kind: String, Int)
    case badHeader(String)

    public var description: String {
        switch self {
        case .empty: return "empty message"
        case .notTessera: return "not a Tessera message"
        case .unsupportedVersion(let v): return "protocol version \(v) (this build speaks \(ClusterMessage.version))"
        case .unknownKind(let k): return "unknown message kind \(k)"
        case .wrongFrameCount(let kind, let n): return "\(kind) message with \(n) frames"
        case .badHeader(let kind): return "malformed \(kind) header"
        }
    }
}
