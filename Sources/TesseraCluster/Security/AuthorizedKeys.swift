import Foundation
import Logging
import TesseraCore
import TesseraEngine

/// The worker keys a coordinator accepts, read from its authorized keys file and read again when the
/// file changes (`reloadIfChanged`, looked at every second) or on SIGHUP (`reload`). Shared by the ZAP
/// handler's thread, which admits connections, and the loop, which forgets workers whose key went.
final class AuthorizedKeys: Sendable {
    struct State {
        /// Each key with the name written after it.
        var keys: [String: String?] = [:]
        /// Goes up with every change of `keys`.
        var generation = 0
        var stamp: FileStamp?
        /// Refused keys already logged (each is logged once).
        var refusalsLogged: Set<String> = []
    }

    let path: String
    let logger: Logger
    let state = Locked(State())

    /// Reads the file; throws when it cannot be read or has a line that is not a key.
    init(path: String, logger: Logger) throws(SecurityError) {
        self.path = path
        self.logger = logger
        try load()
    }

    var generation: Int { state.withValue { $0.generation } }
    var keys: Set<String> { state.withValue { Set($0.keys.keys) } }

    func isAuthorized(_ key: String) -> Bool { state.withValue { $0.keys[key] != nil } }

    /// The ZAP handler's decision; a refused key is logged the first time.
    func admit(key: String, address: String) -> Bool {
        let (allowed, firstRefusal) = state.withValue { s -> (Bool, Bool) in
            if s.keys[key] != nil { return (true, false) }
            return (false, s.refusalsLogged.insert(key).inserted)
        }
        if firstRefusal {
            logger.warning("refused a worker whose key is not authorized", metadata: ["worker.key": "\(key)", "peer.address": "\(address)"])
        }
        return allowed
    }

    /// Reads the file again when its size or modification time changed.
    func reloadIfChanged() {
        guard FileStamp(path) != state.withValue({ $0.stamp }) else { return }
        reload()
    }

    /// Reads the file again; a file that cannot be read keeps the keys as they were, and says so.
    func reload() {
        do {
            try load()
        } catch {
            logger.error("could not read the authorized keys again; keeping the previous ones", metadata: ["error": "\(error)"])
        }
    }

    private func load() throws(SecurityError) {
        // Stamped first: a file that cannot be read is tried again when it changes, not every second.
        state.withValue { $0.stamp = FileStamp(path) }
        let text = try SecurityError.read(path)
        let entries: [KeyFiles.AuthorizedKey]
        do { entries = try KeyFiles.authorizedKeys(parsing: text) } catch { throw SecurityError(.malformed(error), path) }
        let keys = Dictionary(entries.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
        let (added, removed) = state.withValue { s -> (Int, Int) in
            guard Set(keys.keys) != Set(s.keys.keys) else { return (0, 0) }
            let counts = (Set(keys.keys).subtracting(s.keys.keys).count, Set(s.keys.keys).subtracting(keys.keys).count)
            s.keys = keys
            s.generation += 1
            // A key listed again is logged again if it is refused later.
            s.refusalsLogged.subtract(keys.keys)
            return counts
        }
        if added + removed > 0 {
            logger.info("authorized keys read", metadata: ["keys": "\(keys.count)", "keys.added": "\(added)", "keys.removed": "\(removed)", "file": "\(path)"])
        }
    }
}
