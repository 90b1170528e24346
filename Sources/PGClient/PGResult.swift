import CPostgreSQL

/// The rows a statement returned, copied out of libpq's PGresult as text values.
public struct PGRows: Sendable {
    public let columns: [String]
    public let rows: [[String?]]
    /// Rows changed by INSERT/UPDATE/DELETE.
    public let affected: Int

    init(_ result: OpaquePointer) {
        let width = Int(PQnfields(result))
        columns = (0..<width).map { String(cString: PQfname(result, Int32($0))) }
        rows = (0..<Int(PQntuples(result))).map { r in
            (0..<width).map { c in
                PQgetisnull(result, Int32(r), Int32(c)) == 1 ? nil : String(cString: PQgetvalue(result, Int32(r), Int32(c)))
            }
        }
        affected = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    public var count: Int { rows.count }
    public var isEmpty: Bool { rows.isEmpty }

    public subscript(row: Int) -> PGRow { PGRow(columns: columns, values: rows[row]) }
    public var all: [PGRow] { rows.map { PGRow(columns: columns, values: $0) } }
    public var first: PGRow? { rows.first.map { PGRow(columns: columns, values: $0) } }
}

/// One row, read by column name.
public struct PGRow: Sendable {
    let columns: [String]
    let values: [String?]

    public subscript(_ column: String) -> String? {
        guard let i = columns.firstIndex(of: column) else { return nil }
        return values[i]
    }

    public func string(_ column: String) -> String { self[column] ?? "" }
    public func int(_ column: String) -> Int? { self[column].flatMap { Int($0) } }
    public func int64(_ column: String) -> Int64? { self[column].flatMap { Int64($0) } }
    public func double(_ column: String) -> Double? { self[column].flatMap { Double($0) } }
    public func bool(_ column: String) -> Bool? { self[column].map { $0 == "t" } }
}
