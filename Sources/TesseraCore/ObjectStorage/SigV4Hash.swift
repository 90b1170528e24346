import Crypto

/// SigV4's hashes, from swift-crypto: a payload's SHA-256 in hex, and the HMAC-SHA256 of the signing key's chain.
public enum SigV4Hash {
    public static func hexHash<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Array(SHA256.hash(data: Array(bytes))).hexString
    }
}

public enum HMACSHA256 {
    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    public static func authenticate(_ message: String, key: [UInt8]) -> [UInt8] {
        authenticate(Array(message.utf8), key: key)
    }
}
