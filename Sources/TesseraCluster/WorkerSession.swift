import FFmpegKit
import Foundation
import Logging
import TesseraCore
import TesseraEngine
import ZMQKit

/// One run of a `ClusterWorker`: its connections, the tasks in hand and what it heard, all confined to the
/// thread that calls `run`. Encode threads share only the outbox and their own cancellation flags.
final class WorkerSession {
    let options: ClusterWorker.Options
    let logger: Logger
    let outbox = WorkerOutbox()
    var inFlight: [ClusterMessage.SegmentRef: CancellationFlag] = [:]
    var heardFromCoordinator = false

    init(options: ClusterWorker.Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    var ready: ClusterMessage {
        var capabilities = EngineInfo.libraryVersions
        capabilities["threads"] = String(options.threads)
        if options.benchBytesPerFrame != nil { capabilities[BenchResult.capability] = "1" }
        return .ready(.init(workerID: options.workerID, host: ProcessInfo.processInfo.hostName, slots: options.slots,
                            capabilities: capabilities, inFlight: inFlight.keys.sorted { ($0.jobID, $0.index) < ($1.jobID, $1.index) }))
    }

    /// Works until `stop` is set; blocking.
    func run(stop: CancellationFlag) throws(ZMQError) {
        ProcessAllocator.keepFreedMemory()
        let context = try ZMQContext()
        defer { context.close() }
        var backoff = options.heartbeatInterval
        while !stop.isCancelled {
            let socket = try connect(context)
            let outcome = try serve(socket, stop: stop)
            // Give results already sent a moment to leave before the socket goes.
            try? socket.setLinger(milliseconds: 500)
            socket.close()
            if heardFromCoordinator { backoff = options.heartbeatInterval }
            guard outcome == .coordinatorSilent else { return }
            logger.warning("coordinator silent, reconnecting", metadata: ["worker.backoff": "\(backoff)"])
            sleep(backoff, unless: stop)
            backoff = min(backoff * 2, 32)
        }
        // Stopped between connections with work in hand: reconnect once to hand it back.
        if !inFlight.isEmpty {
            let socket = try connect(context)
            handBack(socket)
            socket.close()
        }
    }

    func connect(_ context: ZMQContext) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .dealer)
        try socket.setRoutingID(Array(options.workerID.utf8))
        try socket.setMaximumMessageSize(options.maximumMessageSize)
        try socket.connect(options.endpoint)
        try socket.send(ready.frames())
        logger.info("connected", metadata: ["worker.id": "\(options.workerID)", "coordinator": "\(options.endpoint)"])
        return socket
    }

    enum Outcome { case stopped, coordinatorSilent }

    func serve(_ socket: ZMQSocket, stop: CancellationFlag) throws(ZMQError) -> Outcome {
        let interval = options.heartbeatInterval
        let doorbell = outbox.doorbell
        heardFromCoordinator = false
        var lastHeard = Date()
        var nextBeat = Date().addingTimeInterval(interval)
        while true {
            if let parent = options.parentProcess, getppid() != parent { stop.cancel() }
            if stop.isCancelled {
                handBack(socket)
                return .stopped
            }
            for message in outbox.takeAll() {
                try socket.send(message.frames())
                if let ref = message.segment { inFlight[ref] = nil }
            }
            if Date() >= nextBeat {
                try socket.send(ClusterMessage.heartbeat.frames())
                nextBeat = Date().addingTimeInterval(interval)
            }
            if Date().timeIntervalSince(lastHeard) > interval * Double(options.liveness) { return .coordinatorSilent }
            // Results are sent from this loop, which an encoder thread wakes when it queued one (without a
            // doorbell, it looks every 5 ms while encodes run).
            let wait = doorbell.isValid ? 0.05 : (inFlight.isEmpty ? 0.05 : 0.005)
            guard let frames = try socket.receiveFrames(timeout: min(wait, interval), wake: doorbell.isValid ? doorbell.fd : nil) else {
                doorbell.answer()
                continue
            }
            lastHeard = Date()
            heardFromCoordinator = true
            let message: ClusterMessage
            do {
                // A task's payload (megabytes) is read where libzmq received it, on the encode thread.
                message = try ClusterMessage(head: frames[0].bytes, payloadFrames: frames.count - 1)
            } catch {
                logger.warning("dropped a malformed message", metadata: ["error": "\(error)"])
                continue
            }
            switch message {
            case .task(let header, _):
                start(header, frames[1])
            case .cancel(let jobID):
                for (ref, flag) in inFlight where ref.jobID == jobID { flag.cancel() }
            case .heartbeat, .ready, .result, .failure, .bye:
                break
            }
        }
    }

    /// Encodes on a dedicated thread; the result goes to the outbox for the socket's thread to send.
    func start(_ header: ClusterMessage.TaskHeader, _ payload: ReceivedFrame) {
        let ref = header.segment
        // The same segment again (a second attempt): the first encode gives way.
        inFlight[ref]?.cancel()
        let flag = CancellationFlag()
        inFlight[ref] = flag
        let outbox = self.outbox
        let logger = self.logger
        let threads = options.threads
        let benchBytesPerFrame = options.benchBytesPerFrame
        let niceness = options.encodeNiceness
        startThread(name: "tessera-encode-\(ref.index)") {
            // Linux sets niceness per thread; libx264's own threads inherit it from this one.
            if niceness > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
            let message: ClusterMessage
            do {
                var task = try payload.withUnsafeBytes { (bytes) throws(PayloadError) in try SegmentTask(serializedBytes: bytes) }
                task.header.settings.threads = threads
                let encoded = try benchBytesPerFrame.map { bytes throws(TesseraError) in try BenchResult.make(for: task, bytesPerFrame: bytes) }
                    ?? SegmentEncoder.encode(task, cancelled: { flag.isCancelled })
                let (bytes, checksum) = encoded.serializedWithChecksum()
                message = .result(.init(segment: ref, attempt: header.attempt, checksum: checksum), payload: bytes)
            } catch {
                logger.warning("segment failed", metadata: ["job.id": "\(ref.jobID)", "segment.index": "\(ref.index)", "error": "\(error)"])
                message = .failure(.init(segment: ref, attempt: header.attempt, error: "\(error)"))
            }
            outbox.post(message)
        }
    }

    /// Cancels every encode and tells the coordinator which tasks go back.
    func handBack(_ socket: ZMQSocket) {
        let pending = outbox.takeAll()
        for message in pending { try? socket.send(message.frames()) }
        let finished = Set(pending.compactMap(\.segment))
        let open = inFlight.keys.filter { !finished.contains($0) }
        for ref in open { inFlight[ref]?.cancel() }
        // Give the goodbye up to a second to leave before the socket closes.
        try? socket.setLinger(milliseconds: 1000)
        try? socket.send(ClusterMessage.bye(handedBack: open.sorted { ($0.jobID, $0.index) < ($1.jobID, $1.index) }).frames())
        logger.info("left the coordinator", metadata: ["worker.handedBack": "\(open.count)"])
    }

    func sleep(_ seconds: Double, unless stop: CancellationFlag) {
        let until = Date().addingTimeInterval(seconds)
        while Date() < until && !stop.isCancelled { Thread.sleep(forTimeInterval: 0.05) }
    }
}
