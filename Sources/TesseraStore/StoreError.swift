import PGClient

/// A store failure a user can act on: one line naming what is wrong.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public let sqlState: String?

    public init(_ message: String, sqlState: String? = nil) {
        self.message = message
        self.sqlState = sqlState
    }

    init(_ error: PGError, _ doing: String) {
        message = "\(doing): \(error.message)"
        sqlState = error.sqlState
    }

    public var description: String { message.split(whereSeparator: \.isNewline).joined(separator: " ") }
}
