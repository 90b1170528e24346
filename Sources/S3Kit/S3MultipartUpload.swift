import TesseraCore

/// An object written part by part: bytes are buffered to the part size and each full part is uploaded as it
/// fills, so no whole local copy is needed. The object appears only at `complete()` (CompleteMultipartUpload is
/// the last call); `abort()` leaves neither the object nor billed parts. One of the two must be called.
public final class S3MultipartUpload {
    public static let minimumPartSize = 5 << 20
    public static let maximumParts = 10_000

    public let location: S3Location
    public let partSize: Int
    private let client: S3Client
    private var uploadID: String?
    private var buffer: [UInt8] = []
    private var parts: [(number: Int, etag: String)] = []
    private var finished = false

    /// `expectedSize` (when known) picks a part size that keeps a file of that size within 10,000 parts.
    public init(client: S3Client, location: S3Location, expectedSize: Int64? = nil) {
        self.client = client
        self.location = location
        self.partSize = Self.partSize(expectedSize: expectedSize)
    }

    /// A fixed part size, at least S3's 5 MiB minimum.
    public init(client: S3Client, location: S3Location, partSize: Int) {
        precondition(partSize >= Self.minimumPartSize, "S3 parts are at least 5 MiB")
        self.client = client
        self.location = location
        self.partSize = partSize
    }

    deinit { assert(finished, "S3MultipartUpload for \(location) neither completed nor aborted") }

    /// 8 MiB, or larger in whole MiB so that the expected size with 50 % headroom fits in 10,000 parts.
    public static func partSize(expectedSize: Int64?) -> Int {
        let standard = 8 << 20
        guard let expectedSize, expectedSize > 0 else { return standard }
        let needed = (expectedSize + expectedSize / 2) / Int64(maximumParts) + 1
        let mib = Int64(1 << 20)
        return max(standard, Int((needed + mib - 1) / mib * mib))
    }

    public var partsUploaded: Int { parts.count }

    /// Buffers `bytes`, uploading each part as it fills. Aborts the upload on failure.
    public func write(_ bytes: some Collection<UInt8>) throws(S3Error) {
        precondition(!finished, "written after completion or abort")
        buffer.append(contentsOf: bytes)
        do {
            while buffer.count >= partSize {
                let part = Array(buffer.prefix(partSize))
                buffer.removeFirst(partSize)
                try upload(part)
            }
        } catch {
            abort()
            throw error
        }
    }

    /// Uploads what is left as the last part (it may be under 5 MiB) and completes the object. Aborts on failure.
    @discardableResult
    public func complete() throws(S3Error) -> Int {
        precondition(!finished, "completed twice")
        do {
            if parts.isEmpty || !buffer.isEmpty { try upload(buffer) }
            buffer = []
            try client.completeMultipartUpload(location, uploadID: uploadID!, parts: parts)
            finished = true
            return parts.count
        } catch {
            abort()
            throw error
        }
    }

    /// Abandons the upload: S3 discards the parts. Best effort; safe to call more than once.
    public func abort() {
        defer { finished = true }
        guard !finished, let uploadID else { return }
        try? client.abortMultipartUpload(location, uploadID: uploadID)
    }

    private func upload(_ part: [UInt8]) throws(S3Error) {
        guard parts.count < Self.maximumParts else {
            throw S3Error(.tooManyParts, object: location.description, detail: "more than \(Self.maximumParts) parts of \(partSize) bytes")
        }
        let id: String
        if let uploadID { id = uploadID } else {
            id = try client.createMultipartUpload(location)
            uploadID = id
        }
        let number = parts.count + 1
        parts.append((number, try client.uploadPart(location, uploadID: id, number: number, body: part)))
    }
}
