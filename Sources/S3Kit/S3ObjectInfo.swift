/// What a HEAD tells: the size, and the ETag that pins this version of the object for a whole job.
public struct S3ObjectInfo: Sendable, Equatable {
    public var size: Int64
    public var etag: String

    public init(size: Int64, etag: String) {
        self.size = size
        self.etag = etag
    }
}

/// An upload begun and neither completed nor aborted, as ListMultipartUploads lists it.
public struct S3PendingUpload: Sendable, Equatable {
    public var key: String
    public var uploadID: String
}
