import CPostgreSQL

/// A failed libpq call: SQLSTATE (when the server sent one), libpq's message, and what was being done.
public struct PGError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The connection URL or string cannot be parsed.
        case malformedURL
        /// Could not connect (server down, authentication).
        case connection
        /// The server rejected a statement.
        case statement
        /// The connection broke during a statement; it may or may not have run.
        case connectionLost
    }

    public let kind: Kind
    /// Five-character SQLSTATE, e.g. "23505" for a unique violation; nil when the server sent none.
    public let sqlState: String?
    public let message: String
    public let operation: String

    public init(_ kind: Kind, sqlState: String? = nil, message: String, operation: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        self.operation = operation
    }

    public var description: String {
        let state = sqlState.map { " [\($0)]" } ?? ""
        return "\(operation): \(message)\(state)".split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
