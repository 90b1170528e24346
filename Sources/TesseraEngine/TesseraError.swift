import TesseraCore

/// A user-facing failure: one line naming the file or segment and what is wrong.
public struct TesseraError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        case input, output, settings, segment, audio, stitch, verification, canceled
    }

    public let kind: Kind
    public let subject: String
    public let problem: String
    /// The segment it is about, when it is about one (the subject then names it).
    public let segment: Int?

    public init(_ kind: Kind, _ subject: String, _ problem: String) {
        self.kind = kind
        self.subject = subject
        self.problem = problem
        segment = nil
    }

    /// A failure of segment `index`.
    public init(_ kind: Kind, segment index: Int, _ problem: String) {
        self.kind = kind
        subject = "segment \(index)"
        self.problem = problem
        segment = index
    }

    public static func input(_ path: String, _ problem: String) -> TesseraError { .init(.input, path, problem) }
    public static func output(_ path: String, _ problem: String) -> TesseraError { .init(.output, path, problem) }

    public var description: String {
        let line = subject.isEmpty ? problem : "\(subject): \(problem)"
        return line.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
