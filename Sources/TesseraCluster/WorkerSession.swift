import FFmpegKit
import Foundation
import Logging
import TesseraCore
import TesseraEngine
import ZMQKit

/// A `ClusterWorker`'s work for one coordinator: its connections, the tasks in hand and what it heard,
/// all confined to the thread that calls `run`. Encode threads share only the outbox and their own
/// cancellation flags. A worker serving several coordinators runs one session for each; they share the
/// worker's slots (`pool`).
final class WorkerSession {
    let options: ClusterWorker.Options
    let endpoint: String
    let pool: SlotPool
    let logger: Logger
    let outbox = WorkerOutbox()
    /// Tasks being encoded or whose answer is not yet sent: each one's lease token, cancellation flag and slot.
    private(set) var inFlight: [ClusterMessage.SegmentRef: (token: String, flag: CancellationFlag, slot: SlotLedger.Slot)] = [:]
    var heardFromCoordinator = false
    /// Why the worker last got no work (a failed handshake, a refusal), and when that was logged (said once a
    /// while, not per retry).
    var lastProblem: (text: String, logged: Date)?
    /// A libzmq context its caller owns, for an `inproc://` coordinator in the same context; nil: its own.
    let sharedContext: ZMQContext?
    /// Results made so far (`ClusterWorker.Options.corruptResult`).
    let resultsMade = Locked(0)
    /// Tasks whose source bytes this worker read itself so far (`ClusterWorker.Options.tamperSourceURLs`).
    let sourcesRead = Locked(0)

    init(options: ClusterWorker.Options, endpoint: String, pool: SlotPool, logger: Logger, context: ZMQContext? = nil) {
        sharedContext = context
        self.options = options
        self.endpoint = endpoint
        self.pool = pool
        var logger = logger
        logger[metadataKey: "coordinator"] = "\(endpoint)"
        self.logger = logger
    }

    /// The task's answer went out.
    func answered(_ ref: ClusterMessage.SegmentRef) {
        inFlight[ref] = nil
    }

    var ready: ClusterMessage {
        var capabilities = EngineInfo.libraryVersions
        capabilities["threads"] = String(options.threads)
        // What else an encode's bytes depend on: audits compare only workers alike in it (`AuditBook`).
        capabilities["cpu"] = String(FFmpeg.cpuFlags)
        // This build repeats its bytes with threads when a task asks (`SegmentTask.Header.repeatable`).
        capabilities[AuditBook.repeatableCapability] = "1"
        capabilities[SourceRanges.capability] = "1"
        capabilities[SourceRanges.versionCapability] = String(SourceRanges.version)
        if options.benchBytesPerFrame != nil { capabilities[BenchResult.capability] = "1" }
        let held = inFlight.map { ClusterMessage.LeaseRef(segment: $0.key, token: $0.value.token) }
        return .ready(.init(workerID: options.workerID, host: ProcessInfo.processInfo.hostName, slots: options.slots,
                            capabilities: capabilities, inFlight: held.sorted { ($0.segment.jobID, $0.segment.index) < ($1.segment.jobID, $1.segment.index) }))
    }

    /// Works until `stop` is set; blocking.
    func run(stop: CancellationFlag) throws(ZMQError) {
        ProcessAllocator.keepFreedMemory()
        let context = if let sharedContext { sharedContext } else { try ZMQContext() }
        defer { if context !== sharedContext { context.close() } }
        var backoff = options.heartbeatInterval
        while !stop.isCancelled {
            let socket = try connect(context)
            let monitor = try ZMQMonitor(context, watching: socket)
            let outcome = try serve(socket, monitor: monitor, stop: stop)
            monitor.close()
            // Give results already sent a moment to leave before the socket goes.
            try? socket.setLinger(milliseconds: 500)
            socket.close()
            if heardFromCoordinator { backoff = options.heartbeatInterval }
            guard outcome == .coordinatorSilent else { return }
            logger.warning("coordinator silent, reconnecting", metadata: ["worker.backoff": "\(backoff)"])
            sleep(backoff, unless: stop)
            backoff = min(backoff * 2, ClusterWorker.maximumBackoff)
        }
        // Stopped between connections with work in hand: reconnect once to hand it back.
        if !inFlight.isEmpty {
            let socket = try connect(context)
            handBack(socket)
            socket.close()
        }
    }

    /// The coordinator is on this machine (an ipc endpoint).
    var onThisMachine: Bool { endpoint.hasPrefix("ipc://") }

    func connect(_ context: ZMQContext) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .dealer)
        try socket.setRoutingID(Array(options.workerID.utf8))
        try socket.setMaximumMessageSize(options.maximumMessageSize)
        if let security = options.security {
            try socket.setCurveClient(serverKey: security.coordinatorKey, keys: security.keys)
        }
        // libzmq retries a refused or broken connection itself: after 0.1 s at first, backing off to 8 s;
        // on this machine (ipc), every 10 ms, so that a worker started with its coordinator (`tessera
        // transcode`) joins the moment it binds.
        try socket.setReconnectInterval(seconds: onThisMachine ? 0.01 : 0.1, maximum: onThisMachine ? 0.01 : 8)
        // A connection whose handshake failed takes no messages: a send then gives up instead of blocking.
        try socket.setSendTimeout(seconds: 1)
        try socket.connect(endpoint)
        // Not taken: the coordinator stays silent and the next connection says it again.
        _ = try deliver(ready, socket)
        logger.info("connecting", metadata: ["worker.id": "\(options.workerID)"])
        return socket
    }

    enum Outcome { case stopped, coordinatorSilent }

    func serve(_ socket: ZMQSocket, monitor: ZMQMonitor?, stop: CancellationFlag) throws(ZMQError) -> Outcome {
        let interval = options.heartbeatInterval
        let doorbell = outbox.doorbell
        // A stop (SIGTERM, the parent's pool resting) wakes the loop rather than waiting out its poll.
        let observer = stop.onCancel { [weak doorbell] in doorbell?.ring() }
        defer { stop.stopObserving(observer) }
        heardFromCoordinator = false
        // Said once per connection, at the coordinator's first word that is not a refusal.
        var joined = false
        var lastHeard = Date()
        // On ipc, silence counts from the connection: a local coordinator not bound yet is waited for
        // (libzmq retries every 10 ms) rather than given up on, and the retry backed off.
        var linked = !onThisMachine
        var nextBeat = Date().addingTimeInterval(interval)
        while true {
            if let parent = options.parentProcess, getppid() != parent { stop.cancel() }
            if stop.isCancelled {
                handBack(socket)
                return .stopped
            }
            let outgoing = outbox.takeAll()
            for (n, message) in outgoing.enumerated() {
                guard try deliver(message, socket) else {
                    outbox.putBack(outgoing[n...])
                    return .coordinatorSilent
                }
                // Answered, unless a later lease of the same segment replaced this one meanwhile.
                if let lease = message.lease, inFlight[lease.segment]?.token == lease.token { answered(lease.segment) }
            }
            if let monitor {
                let events = try monitor.events()
                if !linked, events.contains(.connected) {
                    linked = true
                    lastHeard = Date()
                }
                report(events)
            }
            if Date() >= nextBeat {
                guard try deliver(.heartbeat, socket) else { return .coordinatorSilent }
                nextBeat = Date().addingTimeInterval(interval)
            }
            // Results are sent from this loop, which an encoder thread wakes when it queued one (without a
            // doorbell, it looks every 5 ms while encodes run).
            let wait = doorbell.isValid ? 0.05 : (inFlight.isEmpty ? 0.05 : 0.005)
            guard let frames = try socket.receiveFrames(timeout: min(wait, interval), wake: doorbell.isValid ? [doorbell.fd] : []) else {
                doorbell.answer()
                // Judged with the inbox read: a loop held up elsewhere does not miss messages waiting in it.
                if linked, Date().timeIntervalSince(lastHeard) > interval * Double(options.liveness) { return .coordinatorSilent }
                continue
            }
            lastHeard = Date()
            linked = true
            heardFromCoordinator = true
            WorkerMetrics.heardFromCoordinator()
            let message: ClusterMessage
            do {
                // A task's payload (megabytes) is read where libzmq received it, on the encode thread.
                message = try ClusterMessage(head: frames[0].bytes, payloadFrames: frames.count - 1)
            } catch .unsupportedVersion(let version) {
                problem("the coordinator speaks wire protocol version \(version), this worker \(ClusterMessage.version): run one Tessera release on both")
                continue
            } catch {
                logger.warning("dropped a malformed message", metadata: ["error": "\(error)"])
                continue
            }
            if case .refused(let refusal) = message {
                problem("the coordinator refused this worker: \(refusal.detail)")
                continue
            }
            if !joined {
                joined = true
                logger.info("joined the coordinator", metadata: ["worker.id": "\(options.workerID)", "worker.slots": "\(options.slots)",
                                                                "coordinator.key": "\(options.security.map { $0.coordinatorKey } ?? "none (--insecure)")"])
            }
            switch message {
            case .task(let header, _):
                // Beyond its slots (encodes running, for every coordinator it serves) a worker takes nothing:
                // the coordinator gets the lease back at once. The same segment again replaces its encode and
                // takes over its slot (a free one if that encode already ended).
                guard let slot = pool.take(replacing: inFlight[header.segment]?.slot) else {
                    guard try deliver(.busy(.init(segment: header.segment, token: header.token)), socket) else { return .coordinatorSilent }
                    logger.warning("refused a task beyond this worker's slots", metadata: ["job.id": "\(header.segment.jobID)",
                                                                                          "segment.index": "\(header.segment.index)"])
                    continue
                }
                start(header, frames[1], slot: slot)
            case .cancel(let jobID):
                // The coordinator has forgotten these leases: their encodes stop and owe it no answer.
                let canceled = inFlight.filter { $0.key.jobID == jobID }
                for (ref, task) in canceled {
                    task.flag.cancel()
                    inFlight[ref] = nil
                }
                if !canceled.isEmpty {
                    logger.info("job canceled", metadata: ["job.id": "\(jobID)", "segments": "\(canceled.count)"])
                }
            case .heartbeat, .ready, .result, .failure, .bye, .busy, .progress, .refused:
                break
            }
        }
    }

    /// Sends `message`; false when no connection took it within the send timeout.
    func deliver(_ message: ClusterMessage, _ socket: ZMQSocket) throws(ZMQError) -> Bool {
        do {
            try socket.send(message.frames())
            return true
        } catch where error.code == EAGAIN {
            return false
        }
    }

    /// Encodes on a dedicated thread, holding `slot` until the encode ends; the result goes to the outbox for
    /// the socket's thread to send.
    func start(_ header: ClusterMessage.TaskHeader, _ payload: ReceivedFrame, slot: SlotLedger.Slot) {
        let ref = header.segment
        // The same segment again (a second attempt): the first encode gives way.
        inFlight[ref]?.flag.cancel()
        let flag = CancellationFlag()
        inFlight[ref] = (header.token, flag, slot)
        let outbox = self.outbox, pool = self.pool
        let logger = self.logger
        let threads = options.threads
        let benchBytesPerFrame = options.benchBytesPerFrame
        let niceness = options.encodeNiceness
        let corruptResult = options.corruptResult, resultsMade = self.resultsMade
        let tamperSourceURLs = options.tamperSourceURLs, misprobeSources = options.misprobeSources, sourcesRead = self.sourcesRead
        let ignorePasses = options.ignorePasses
        startThread(name: "tessera-encode-\(ref.index)") {
            // Linux sets niceness per thread; libx264's own threads inherit it from this one.
            if niceness > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
            WorkerMetrics.encodeStarted()
            let message: ClusterMessage?
            var lastReport = Stopwatch.now
            var code: ClusterMessage.Failure.Code?
            do {
                var task = try payload.withUnsafeBytes { (bytes) throws(PayloadError) in try SegmentTask(serializedBytes: bytes) }
                if task.header.source != nil, benchBytesPerFrame == nil {
                    // The bytes are read here, from object storage; a read that fails is said as such, and the task is retried.
                    // (A benchmark worker reads nothing: it measures the coordinator, which moves none of these bytes.)
                    code = .sourceUnreadable
                    let read = sourcesRead.withValue { count -> Int in count += 1; return count }
                    if read <= tamperSourceURLs ?? 0 { task = WorkerFault.tampered(task) }
                    if read <= misprobeSources ?? 0 { task = WorkerFault.misprobed(task) }
                    guard let read = try task.readingSource() else {
                        code = .sourceNotAsProbed
                        throw TesseraError.input(task.header.source?.object ?? "source", "segment \(ref.index)'s bytes are not the packets probed there")
                    }
                    task = read
                    code = nil
                }
                task.setThreads(own: threads)
                if ignorePasses { task = WorkerFault.passIgnored(task) }
                let encoded = try benchBytesPerFrame.map { bytes throws(TesseraError) in try BenchResult.make(for: task, bytesPerFrame: bytes) }
                    ?? SegmentEncoder.encode(task, cancelled: { flag.isCancelled }) { frames in
                        // Twice a second at most: the coordinator shows frames, speed and time left from it.
                        let now = Stopwatch.now
                        guard now - lastReport >= 0.5 else { return }
                        lastReport = now
                        outbox.post(.progress(.init(lease: .init(segment: ref, token: header.token), frames: frames)))
                    }
                WorkerMetrics.encoded(encoded.header)
                // Canceled while the encoder flushed: the lease is gone, and so is the need for the result.
                if flag.isCancelled { throw TesseraError.canceled }
                let made = resultsMade.withValue { count -> Int in count += 1; return count }
                let (bytes, checksum) = (made >= corruptResult ?? .max ? WorkerFault.damaged(encoded) : encoded).serializedWithChecksum()
                message = .result(.init(segment: ref, attempt: header.attempt, token: header.token, checksum: checksum), payload: bytes)
            } catch let error as TesseraError where error.kind == .canceled && flag.isCancelled {
                // Canceled (the job, or replaced by a later lease of the segment): not a failure, and nothing to answer.
                logger.debug("encode canceled", metadata: ["job.id": "\(ref.jobID)", "segment.index": "\(ref.index)"])
                message = nil
            } catch {
                logger.warning("segment failed", metadata: ["job.id": "\(ref.jobID)", "segment.index": "\(ref.index)", "error": "\(error)"])
                message = .failure(.init(segment: ref, attempt: header.attempt, token: header.token, error: "\(error)", code: code))
            }
            WorkerMetrics.encodeEnded(message)
            // A slot is an encode: it is free once the answer is ready, even while the answer waits for its
            // coordinator (one that is gone must not hold the slots other coordinators' tasks need). Freed
            // before the answer goes, so a task sent in reply to it finds the slot free. A replaced encode's
            // slot went to its replacement, which frees it when it ends.
            if pool.give(slot) == .overGive {
                logger.error("gave back a slot not held", metadata: ["job.id": "\(ref.jobID)", "segment.index": "\(ref.index)"])
            }
            if let message { outbox.post(message) }
        }
    }

    /// Cancels every encode and tells the coordinator which tasks go back.
    func handBack(_ socket: ZMQSocket) {
        let pending = outbox.takeAll()
        for message in pending { try? socket.send(message.frames()) }
        let finished = Set(pending.compactMap(\.segment))
        let open = inFlight.keys.filter { !finished.contains($0) }
        for ref in open { inFlight[ref]?.flag.cancel() }
        // Give the goodbye up to a second to leave before the socket closes.
        try? socket.setLinger(milliseconds: 1000)
        try? socket.send(ClusterMessage.bye(handedBack: open.sorted { ($0.jobID, $0.index) < ($1.jobID, $1.index) }).frames())
        logger.info("drained: left the coordinator", metadata: ["worker.handedBack": "\(open.count)"])
    }

    /// Says in one line why the secure handshake fails (again every 30 s while it does), and that it
    /// succeeded once it does after a failure.
    func report(_ events: [ZMQMonitor.Event]) {
        for event in events {
            let problem: String
            switch event {
            case .handshakeSucceeded:
                if lastProblem != nil { logger.info("secure handshake with the coordinator succeeded") }
                lastProblem = nil
                continue
            case .handshakeRefused:
                problem = "the coordinator refused this worker's key \(options.security?.keys.publicKey ?? ""): it is not in the coordinator's authorized keys; retrying"
            case .handshakeFailed where options.security == nil:
                problem = "the coordinator requires CURVE keys: start this worker with --key and --coordinator-key; retrying"
            case .handshakeFailed(let code) where code == Int(ZMQMonitor.mechanismMismatch):
                problem = "the coordinator does not use CURVE keys (start this worker with --insecure for a plaintext coordinator); retrying"
            case .handshakeFailed:
                problem = "the secure handshake with the coordinator failed: --coordinator-key is not the coordinator's public key; retrying"
            case .connected, .disconnected:
                continue
            }
            self.problem(problem)
        }
    }

    /// Logs why the worker gets no work, again every 30 s while it does not.
    func problem(_ text: String) {
        if lastProblem?.text != text || Date().timeIntervalSince(lastProblem!.logged) >= 30 {
            logger.error("\(text)")
            lastProblem = (text, Date())
        }
    }

    func sleep(_ seconds: Double, unless stop: CancellationFlag) {
        let until = Date().addingTimeInterval(seconds)
        while Date() < until && !stop.isCancelled { Thread.sleep(forTimeInterval: 0.05) }
    }
}
