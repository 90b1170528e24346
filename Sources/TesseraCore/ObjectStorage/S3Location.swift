/// `s3://bucket/key`: where an input or output lives in object storage.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    public var bucket: String
    public var key: String

    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Nil for anything that is not `s3://` followed by a bucket and a non-empty key.
    public init?(url: String) {
        guard url.hasPrefix("s3://") else { return nil }
        let rest = url.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let bucket = String(rest[..<slash]), key = String(rest[rest.index(after: slash)...])
        guard !bucket.isEmpty, !key.isEmpty else { return nil }
        self.init(bucket: bucket, key: key)
    }

    public static func isS3(_ path: String) -> Bool { path.hasPrefix("s3://") }

    public var description: String { "s3://\(bucket)/\(key)" }
}
