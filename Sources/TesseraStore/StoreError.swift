import PGClient

/// A store failure a user can act on: one line naming what is wrong, with what libpq reported when the
/// failure came from it (its kind and SQLSTATE), so callers decide by code, never by the message.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public let message: String
    /// libpq's kind of failure; nil for the store's own refusals (no such job, a state it cannot take).
    public let kind: PGError.Kind?
    /// Five-character SQLSTATE, when the server sent one.
    public let sqlState: String?

    public init(_ message: String, kind: PGError.Kind? = nil, sqlState: String? = nil) {
        self.message = message
        self.kind = kind
        self.sqlState = sqlState
    }

    init(_ error: PGError, _ doing: String) {
        self.init("\(doing): \(error.message)", kind: error.kind, sqlState: error.sqlState)
    }

    /// The database could not be reached, or the connection broke: nothing this store does will work
    /// until it comes back.
    public var isConnectionFailure: Bool { kind == .connection || kind == .connectionLost }

    public var description: String { message.split(whereSeparator: \.isNewline).joined(separator: " ") }
}
