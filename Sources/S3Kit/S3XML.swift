import Foundation

/// The few values Tessera reads from S3's small XML answers (error codes, upload ids, listed uploads), found by
/// tag without a general XML parser.
struct S3XML {
    let text: String

    init(_ body: [UInt8]) { text = String(decoding: body, as: UTF8.self) }
    init(text: String) { self.text = text }

    /// The text of every `<tag>…</tag>`, entities decoded.
    func all(_ tag: String) -> [String] {
        var values: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(tag)>"), let close = rest[open.upperBound...].range(of: "</\(tag)>") {
            values.append(Self.unescape(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        return values
    }

    func first(_ tag: String) -> String? { all(tag).first }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }
}
