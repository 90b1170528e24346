/// Where S3 requests go: AWS's regional endpoint with the bucket in the host name (virtual-hosted style), or an
/// S3-compatible store's URL with the bucket in the path (path style), as AWS's tools address MinIO or Ceph.
public struct S3Endpoint: Sendable, Equatable {
    public var scheme: String
    /// Host and, when not the scheme's default, `:port`.
    public var authority: String
    public var pathStyle: Bool

    public init(scheme: String, authority: String, pathStyle: Bool) {
        self.scheme = scheme
        self.authority = authority
        self.pathStyle = pathStyle
    }

    /// AWS itself: `https://s3.REGION.amazonaws.com`.
    public static func aws(region: String) -> S3Endpoint {
        S3Endpoint(scheme: "https", authority: "s3.\(region).amazonaws.com", pathStyle: false)
    }

    /// An endpoint URL such as `http://127.0.0.1:9000`; nil unless http(s) with a host and no path beyond `/`.
    public init?(url: String) {
        let parts = url.split(separator: "://", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["http", "https"].contains(parts[0].lowercased()) else { return nil }
        var authority = parts[1]
        if authority.hasSuffix("/") { authority.removeLast() }
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else { return nil }
        let scheme = parts[0].lowercased()
        if scheme == "http", authority.hasSuffix(":80") { authority.removeLast(3) }
        if scheme == "https", authority.hasSuffix(":443") { authority.removeLast(4) }
        self.init(scheme: scheme, authority: authority, pathStyle: true)
    }

    /// Host header and object path for one object (or, with an empty key, its bucket). Buckets with dots go
    /// path style on AWS too: a dotted host name does not match the wildcard certificate.
    public func address(bucket: String, key: String) -> (host: String, path: String) {
        if pathStyle || bucket.contains(".") { return (authority, "/\(bucket)/\(key)") }
        return ("\(bucket).\(authority)", "/\(key)")
    }
}
