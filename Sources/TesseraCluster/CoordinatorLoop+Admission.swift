import Logging
import TesseraCore
import ZMQKit

extension CoordinatorLoop {
    /// Asks the state machine what becomes of a message (routing id, header, payloads): returns its worker
    /// and the message when accepted; logs a drop, and counts, records and logs a refusal.
    func admit(_ frames: [ReceivedFrame], now: Double) throws -> (worker: String, message: ClusterMessage)? {
        // A result's payload (megabytes) goes to the spooler where libzmq received it.
        let parsed = Result { () throws(WireError) in try ClusterMessage(head: frames[1].bytes, payloadFrames: frames.count - 2) }
        // The key comes with the header frame: the routing id frame is made by the ROUTER and carries no
        // connection metadata.
        let key = frames[1].userID
        let credential: CoordinatorStateMachine.Credential = authorized.map { keys in
            .curve(key: key, authorized: key.map(keys.isAuthorized) ?? false)
        } ?? .plaintext
        switch machine.messageArrived(from: frames[0].bytes, parsed, credential: credential, now: now) {
        case .drop(.unacceptableIdentity):
            logger.warning("\(CoordinatorStateMachine.Drop.unacceptableIdentity)")
            return nil
        case .drop(.otherWireVersion(let version)):
            let worker = String(decoding: frames[0].bytes, as: UTF8.self)
            tell(worker, .init(.wireVersion, "the coordinator speaks wire protocol version \(ClusterMessage.version), this worker \(version): "
                                + "run one Tessera release on both"), now: now) {
                logger.warning("\(CoordinatorStateMachine.Drop.otherWireVersion(version))", metadata: ["peer": "\(worker)"])
            }
            return nil
        case .drop(.quarantined):
            // Counted by the quarantine, not logged per message.
            return nil
        case .drop(let reason):
            // The identity is acceptable: a malformed message is the only one that did not parse.
            var metadata: Logger.Metadata = ["peer": "\(String(decoding: frames[0].bytes, as: UTF8.self))"]
            if case .failure(let error) = parsed { metadata["error"] = "\(error)" }
            logger.warning("\(reason)", metadata: metadata)
            return nil
        case .refuse(let worker, let refusal):
            let message = try parsed.get()
            if case .result = message { CoordinatorMetrics.resultRefused(refusal) }
            if let lease = message.lease { try refuse(lease.segment, from: worker, refusal, "message refused") }
            switch refusal {
            case .keyChanged: tell(worker, .idBoundToAnotherKey, now: now)
            case .unauthorizedKey: tell(worker, .init(.keyNotAuthorized, "this worker's key \(key ?? "") is not among the coordinator's authorized keys now"), now: now)
            default: break
            }
            if droppedKeysLogged.insert(key ?? "").inserted {
                logger.warning("dropping messages from a key that is not authorized now", metadata: ["peer": "\(worker)", "worker.key": "\(key ?? "none")"])
            }
            return nil
        case .accept(let worker, let recordResultsFirst):
            // Anything that may hand a lease back records the results received before it first.
            if recordResultsFirst { try spooler.drain() }
            return (worker, try parsed.get())
        }
    }

    /// Tells `worker` why what it sent is refused, at most every ten seconds per reason; `log` runs then too.
    func tell(_ worker: String, _ refusal: ClusterMessage.Refusal, now: Double, log: () -> Void = {}) {
        let key = worker + "\u{0}" + refusal.reason.rawValue
        if let last = toldRefusals[key], now - last < 10 { return }
        toldRefusals[key] = now
        log()
        try? socket.send([Array(worker.utf8)] + ClusterMessage.refused(refusal).frames())
    }
}

extension ClusterMessage.Refusal {
    /// A worker id that joined first with another key.
    static let idBoundToAnotherKey = Self(.idBoundToAnotherKey,
        "this worker's id joined the coordinator first with another key: give this worker its own --id, or remove the id's worker row")
}
