/// One HTTP request as SigV4 sees it, before signing. The path and query are raw (not yet percent-encoded):
/// the signer encodes them once, and the URL sent is built from the same encoding, so the two cannot differ.
public struct SigV4Request: Sendable, Equatable {
    public var method: String
    /// Host, with `:port` when the port is not the scheme's default (SigV4 signs the Host header as sent).
    public var host: String
    /// The object path, e.g. `/bucket/key with spaces`; each segment is encoded, slashes are kept.
    public var path: String
    public var query: [(name: String, value: String)]
    /// Headers to sign besides host, x-amz-date, x-amz-content-sha256 and x-amz-security-token.
    public var headers: [(name: String, value: String)]
    /// Lower-case hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
    public var payloadHash: String

    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public init(method: String, host: String, path: String, query: [(name: String, value: String)] = [],
                headers: [(name: String, value: String)] = [], payloadHash: String = SigV4Request.emptyPayloadHash) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
        self.payloadHash = payloadHash
    }

    public static func == (lhs: SigV4Request, rhs: SigV4Request) -> Bool {
        lhs.method == rhs.method && lhs.host == rhs.host && lhs.path == rhs.path && lhs.payloadHash == rhs.payloadHash
            && lhs.query.elementsEqual(rhs.query, by: { $0 == $1 }) && lhs.headers.elementsEqual(rhs.headers, by: { $0 == $1 })
    }

    /// The path as sent and signed: each segment percent-encoded (S3 encodes once, unlike other services).
    public var encodedPath: String {
        let encoded = path.split(separator: "/", omittingEmptySubsequences: false).map { SigV4Encoding.encode(String($0)) }
            .joined(separator: "/")
        return encoded.hasPrefix("/") ? encoded : "/" + encoded
    }

    /// The query as sent and signed: encoded pairs sorted by name then value, `name=` for an empty value.
    public var canonicalQuery: String {
        query.map { (SigV4Encoding.encode($0.name), SigV4Encoding.encode($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}

/// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters kept, every other byte `%XX` upper-case.
public enum SigV4Encoding {
    public static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }
}
