import Crypto

/// The ETag S3 gives an object completed from parts: the MD5 of the parts' MD5s (their ETags, in part order), a
/// dash and the number of parts. What a client that lost Complete's answer can compare with the object it finds.
public enum MultipartETag {
    /// Nil when a part's ETag is not an MD5 (an object encrypted with KMS has other ETags).
    public static func of(parts: [String]) -> String? {
        var digests: [UInt8] = []
        for etag in parts {
            let hex = Array(etag.trimmingQuotes.utf8)
            guard hex.count == 32, let bytes = bytes(hex) else { return nil }
            digests += bytes
        }
        return Array(Insecure.MD5.hash(data: digests)).hexString + "-\(parts.count)"
    }

    private static func bytes(_ hex: [UInt8]) -> [UInt8]? {
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        for i in stride(from: 0, to: hex.count, by: 2) {
            guard let high = nibble(hex[i]), let low = nibble(hex[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}

extension String {
    /// Without the double quotes S3 puts around an ETag.
    public var trimmingQuotes: String {
        var text = Substring(self)
        if text.hasPrefix("\"") { text = text.dropFirst() }
        if text.hasSuffix("\"") { text = text.dropLast() }
        return String(text)
    }
}
