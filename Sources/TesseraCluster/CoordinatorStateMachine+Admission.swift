import Foundation
import TesseraCore

extension CoordinatorStateMachine {
    /// How a message's sender authenticated.
    enum Credential: Equatable {
        /// No CURVE: there is no key to check.
        case plaintext
        /// CURVE: the key the connection authenticated with (nil when libzmq gave none), and whether it is
        /// among the authorized keys now.
        case curve(key: String?, authorized: Bool)
    }

    /// Why a message is ignored without a trace in the store: nothing in it can be trusted to name a lease.
    enum Drop: Equatable, CustomStringConvertible {
        /// Its routing id is not UTF-8, or not a worker id a coordinator accepts.
        case unacceptableIdentity
        /// Its header could not be read.
        case malformed
        /// It names a segment of a job whose id is not a UUID.
        case notAJobID
        /// A ready whose worker id is not the identity it came from.
        case readyNotItsIdentity
        /// It speaks another wire protocol version (another release): the worker is told.
        case otherWireVersion(UInt8)
        /// Its worker is quarantined (`CoordinatorLoop.quarantine`).
        case quarantined

        var description: String {
            switch self {
            case .unacceptableIdentity: "dropped a message from an unacceptable identity"
            case .malformed: "dropped a malformed message"
            case .notAJobID: "dropped a message for a job id that is not one"
            case .readyNotItsIdentity: "dropped a ready whose id is not its identity"
            case .quarantined: "dropped a message from a quarantined worker"
            case .otherWireVersion(let version):
                "refused a worker speaking wire protocol version \(version); this coordinator speaks \(ClusterMessage.version) (run one Tessera release on both)"
            }
        }
    }

    /// What becomes of a message from a worker, before it is looked at for what it says.
    enum Admission: Equatable {
        /// Handled from `worker`; with `recordResultsFirst`, the results already received are recorded before
        /// (it may hand a lease back).
        case accept(worker: String, recordResultsFirst: Bool)
        /// Ignored, and logged.
        case drop(Drop)
        /// Its key may not speak (`unauthorizedKey`, `keyChanged`): counted, recorded against the lease it
        /// names, and logged.
        case refuse(worker: String, Refusal)
    }

    /// A message arrived from the routing id `identity`, read as `parsed`, from a sender that authenticated
    /// as `credential`. With CURVE, a message counts only while its key is authorized and, once a worker
    /// joined, only under the key it joined with. An accepted message counts as heard from its worker.
    mutating func messageArrived(from identity: [UInt8], _ parsed: Result<ClusterMessage, WireError>, credential: Credential,
                                 now: Double) -> Admission {
        let worker = String(decoding: identity, as: UTF8.self)
        guard Array(worker.utf8) == identity, Coordinator.acceptable(worker) else { return .drop(.unacceptableIdentity) }
        guard !quarantined.contains(worker) else { return .drop(.quarantined) }
        guard case .success(let message) = parsed else {
            if case .failure(.unsupportedVersion(let version)) = parsed { return .drop(.otherWireVersion(version)) }
            return .drop(.malformed)
        }
        let refs = message.segment.map { [$0] } ?? { if case .bye(let refs) = message { refs } else { [] } }()
        guard refs.allSatisfy({ UUID(uuidString: $0.jobID) != nil }) else { return .drop(.notAJobID) }
        if case .curve(let key, let authorized) = credential {
            guard let key, authorized else { return .refuse(worker: worker, .unauthorizedKey) }
            if let joinedWith = peers[worker]?.key, joinedWith != key { return .refuse(worker: worker, .keyChanged) }
        }
        let recordResultsFirst = received(message.kind, from: worker, now: now)
        if case .ready(let ready) = message, ready.workerID != worker { return .drop(.readyNotItsIdentity) }
        return .accept(worker: worker, recordResultsFirst: recordResultsFirst)
    }
}
