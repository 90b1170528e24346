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
        case .drop(let reason):
            // The identity is acceptable: a malformed message is the only one that did not parse.
            var metadata: Logger.Metadata = ["peer": "\(String(decoding: frames[0].bytes, as: UTF8.self))"]
            if case .failure(let error) = parsed { metadata["error"] = "\(error)" }
            logger.warning("\(reason)", metadata: metadata)
            return nil
        case .refuse(let worker, let refusal):
            let message = try parsed.get()
            if case .result = message { CoordinatorMetrics.resultRefused(refusal) }
            if let lease = message.lease { try refuse(lease.segment, from: worker, "\(refusal)") }
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
}
