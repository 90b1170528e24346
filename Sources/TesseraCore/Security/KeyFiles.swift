/// The files a secured cluster is configured with: a process's secret key (`NAME.key`, written by
/// `tessera keygen`), a public key (`NAME.pub`), and the coordinator's list of authorized worker keys.
/// Keys are CURVE keys in Z85 text, 40 characters.
public enum KeyFiles {
    /// A failure reading one of these files: what is wrong, and the line when it is about one.
    public struct Failure: Error, Equatable, CustomStringConvertible, Sendable {
        public enum Code: Equatable, Sendable {
            case notAKey, missingSecretKey, mismatchedPublicKey
        }

        public let code: Code
        public let line: Int?

        public init(code: Code, line: Int?) {
            self.code = code
            self.line = line
        }

        public var description: String {
            let at = line.map { "line \($0): " } ?? ""
            switch code {
            case .notAKey: return "\(at)not a CURVE key (40 characters of Z85)"
            case .missingSecretKey: return "no secret-key line (a key pair written by `tessera keygen`)"
            case .mismatchedPublicKey: return "its public-key line is not the secret key's public key"
            }
        }
    }

    /// Z85's alphabet (ZeroMQ RFC 32).
    static let z85 = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")

    /// Whether `text` looks like a Z85 key: 40 characters of the alphabet. (libzmq has the last word.)
    public static func isKeyText(_ text: Substring) -> Bool {
        text.count == 40 && text.allSatisfy { z85.contains($0) }
    }

    /// A key pair file: `public-key = KEY` and `secret-key = KEY` lines; `#` comments.
    public struct SecretKey: Equatable, Sendable {
        public var publicKey: String
        public var secretKey: String

        public init(publicKey: String, secretKey: String) {
            self.publicKey = publicKey
            self.secretKey = secretKey
        }

        public init(parsing text: String) throws(Failure) {
            var values: [String: String] = [:]
            for (n, line) in KeyFiles.lines(text) {
                let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
                guard parts.count == 2, ["public-key", "secret-key"].contains(parts[0]) else { continue }
                guard KeyFiles.isKeyText(parts[1]) else { throw Failure(code: .notAKey, line: n) }
                values[String(parts[0])] = String(parts[1])
            }
            guard let secret = values["secret-key"] else { throw Failure(code: .missingSecretKey, line: nil) }
            secretKey = secret
            publicKey = values["public-key"] ?? ""
        }

        /// The file's text, with a comment naming the key.
        public func text(name: String) -> String {
            """
            # Tessera CURVE key pair "\(name)": keep this file secret (tessera keygen).
            public-key = \(publicKey)
            secret-key = \(secretKey)

            """
        }
    }

    /// A public key file (`NAME.pub`): the first word of the first line that is not a comment.
    public static func publicKey(parsing text: String) throws(Failure) -> String {
        guard let (n, line) = lines(text).first else { throw Failure(code: .notAKey, line: nil) }
        let key = line.split(whereSeparator: \.isWhitespace).first ?? ""
        guard isKeyText(key) else { throw Failure(code: .notAKey, line: n) }
        return String(key)
    }

    /// One authorized worker: its key and the name written after it, if any.
    public struct AuthorizedKey: Equatable, Sendable {
        public var key: String
        public var name: String?
    }

    /// The authorized keys file: one key a line, optionally followed by a name; `#` comments, blank lines.
    public static func authorizedKeys(parsing text: String) throws(Failure) -> [AuthorizedKey] {
        var keys: [AuthorizedKey] = []
        for (n, line) in lines(text) {
            let words = line.split(maxSplits: 1, whereSeparator: \.isWhitespace)
            guard isKeyText(words[0]) else { throw Failure(code: .notAKey, line: n) }
            keys.append(AuthorizedKey(key: String(words[0]), name: words.count > 1 ? String(words[1].trimmingSpaces) : nil))
        }
        return keys
    }

    /// The lines that are neither blank nor comments, trimmed, with their numbers from 1. `#` is a Z85
    /// character, so a line that starts with a key is a key's even when that key starts with `#`.
    static func lines(_ text: String) -> [(Int, Substring)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { i, raw in
            let line = raw.trimmingSpaces
            let comment = line.hasPrefix("#") && !isKeyText(line.split(whereSeparator: \.isWhitespace).first ?? "")
            return line.isEmpty || comment ? nil : (i + 1, line)
        }
    }
}

extension Substring {
    /// Without leading and trailing whitespace.
    var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return s
    }
}
