import Foundation
import TesseraCore
import ZMQKit

/// What a coordinator secures its socket with: its key pair and the file of the workers' keys it accepts.
public struct CoordinatorSecurity: Sendable {
    public var keys: CurveKeyPair
    public var authorizedKeysPath: String

    public init(keyFile: String, authorizedKeysPath: String) throws(SecurityError) {
        keys = try SecurityError.loadKeyPair(keyFile)
        self.authorizedKeysPath = authorizedKeysPath
    }
}

/// What a worker connects with: its key pair and the coordinator's public key.
public struct WorkerSecurity: Sendable {
    public var keys: CurveKeyPair
    public var coordinatorKey: String

    /// `coordinatorKey` is the coordinator's `.pub` file, or the 40-character key itself.
    public init(keyFile: String, coordinatorKey: String) throws(SecurityError) {
        keys = try SecurityError.loadKeyPair(keyFile)
        if KeyFiles.isKeyText(Substring(coordinatorKey)) {
            self.coordinatorKey = coordinatorKey
        } else {
            let text = try SecurityError.read(coordinatorKey)
            do { self.coordinatorKey = try KeyFiles.publicKey(parsing: text) } catch { throw SecurityError(.malformed(error), coordinatorKey) }
        }
        guard CurveKeyPair.isKey(self.coordinatorKey) else { throw SecurityError(.malformed(.init(code: .notAKey, line: nil)), coordinatorKey) }
    }
}

/// A key or key file that cannot be used: which file, and what is wrong with it.
public struct SecurityError: Error, CustomStringConvertible, Sendable {
    public enum Code: Sendable, Equatable {
        case io(errno: Int32)
        case malformed(KeyFiles.Failure)
        case exists
        case curveUnavailable
    }

    public let code: Code
    public let path: String

    public init(_ code: Code, _ path: String) {
        self.code = code
        self.path = path
    }

    public var description: String {
        switch code {
        case .io(let errno): return "\(path): \(String(cString: strerror(errno)))"
        case .malformed(let failure): return "\(path): \(failure)"
        case .exists: return "\(path): already exists (tessera keygen never overwrites a key)"
        case .curveUnavailable: return "\(path): this libzmq has no CURVE support (built without libsodium)"
        }
    }

    static func read(_ path: String) throws(SecurityError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw SecurityError(.io(errno: errno == 0 ? ENOENT : errno), path) }
        return String(decoding: data, as: UTF8.self)
    }

    /// A key pair file written by `tessera keygen`; its public key is derived from the secret key and must
    /// match the one written beside it.
    static func loadKeyPair(_ path: String) throws(SecurityError) -> CurveKeyPair {
        guard CurveKeyPair.available else { throw SecurityError(.curveUnavailable, path) }
        let text = try read(path)
        let file: KeyFiles.SecretKey
        do { file = try KeyFiles.SecretKey(parsing: text) } catch { throw SecurityError(.malformed(error), path) }
        guard let pair = CurveKeyPair(secretKey: file.secretKey) else { throw SecurityError(.malformed(.init(code: .notAKey, line: nil)), path) }
        guard file.publicKey.isEmpty || file.publicKey == pair.publicKey else { throw SecurityError(.malformed(.init(code: .mismatchedPublicKey, line: nil)), path) }
        return pair
    }

    /// Writes a new key pair: `NAME.key` (mode 0600) and `NAME.pub`; refuses to overwrite either.
    public static func generate(name: String) throws -> (keyFile: String, publicFile: String, keys: CurveKeyPair) {
        let keyFile = name + ".key", publicFile = name + ".pub"
        guard CurveKeyPair.available else { throw SecurityError(.curveUnavailable, keyFile) }
        for path in [keyFile, publicFile] where FileManager.default.fileExists(atPath: path) { throw SecurityError(.exists, path) }
        // A fresh host has no /etc/tessera yet: the folder is made, readable by its owner only.
        try makeFolder(URL(fileURLWithPath: keyFile).deletingLastPathComponent().path)
        let keys = try CurveKeyPair.generate()
        let label = URL(fileURLWithPath: name).lastPathComponent
        try write(KeyFiles.SecretKey(publicKey: keys.publicKey, secretKey: keys.secretKey).text(name: label), to: keyFile, mode: 0o600)
        do {
            try write(keys.publicKey + "\n", to: publicFile, mode: 0o644)
        } catch {
            unlink(keyFile)
            throw error
        }
        return (keyFile, publicFile, keys)
    }

    /// Creates `folder` and the folders above it that are missing, mode 0700.
    static func makeFolder(_ folder: String) throws(SecurityError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) { return }
        let parent = URL(fileURLWithPath: folder).deletingLastPathComponent().path
        if parent != folder { try makeFolder(parent) }
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST else { throw SecurityError(.io(errno: errno), folder) }
    }

    /// Creates `path` exclusively with `mode` (never replacing a file), and writes `text`.
    static func write(_ text: String, to path: String, mode: mode_t) throws(SecurityError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SecurityError(errno == EEXIST ? .exists : .io(errno: errno), path) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            let failure = errno
            unlink(path)
            throw SecurityError(.io(errno: failure), path)
        }
    }
}
