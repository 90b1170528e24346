import Foundation
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
    private var bytesSent: Int64 = 0
    /// The number `write` gives its first part: 2 when part 1 is held back for `complete(first:)`.
    private let firstWritten: Int

    /// `expectedSize` (when known) picks a part size that keeps a file of that size within 10,000 parts.
    public init(client: S3Client, location: S3Location, expectedSize: Int64? = nil) {
        self.client = client
        self.location = location
        self.partSize = Self.partSize(expectedSize: expectedSize)
        firstWritten = 1
    }

    /// A fixed part size, at least S3's 5 MiB minimum. `holdingFirstPart`: `write` uploads parts from number 2 and
    /// part 1 comes last, at `complete(first:)` (a file whose start is written last: an index reserved before its media).
    public init(client: S3Client, location: S3Location, partSize: Int, holdingFirstPart: Bool = false) {
        precondition(partSize >= Self.minimumPartSize, "S3 parts are at least 5 MiB")
        self.client = client
        self.location = location
        self.partSize = partSize
        firstWritten = holdingFirstPart ? 2 : 1
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
        do {
            // A whole part given as one: sent without a copy.
            if buffer.isEmpty, bytes.count == partSize, let part = bytes as? [UInt8] { return try upload(part) }
            buffer.append(contentsOf: bytes)
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
        return try finishing { () throws(S3Error) in
            if parts.isEmpty || !buffer.isEmpty { try upload(buffer) }
        }
    }

    /// Uploads part 1, then what is left as the last part, and completes the object; an object that never needed a
    /// second part is one PUT of `first`. `first` is at least 5 MiB when other parts were written. Aborts on failure.
    @discardableResult
    public func complete(first: [UInt8]) throws(S3Error) -> Int {
        precondition(!finished && firstWritten == 2, "complete(first:) needs an upload made holdingFirstPart, once")
        if uploadID == nil, buffer.isEmpty {
            do { _ = try client.put(location, body: first) } catch {
                finished = true
                throw error
            }
            finished = true
            return 1
        }
        return try finishing { () throws(S3Error) in
            if !buffer.isEmpty { try upload(buffer) }
            try upload(first, number: 1)
        }
    }

    /// Uploads the last parts, then completes; the number of parts. Aborts on failure.
    private func finishing(_ lastParts: () throws(S3Error) -> Void) throws(S3Error) -> Int {
        do {
            try lastParts()
            buffer = []
            try completeUpload()
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

    /// CompleteMultipartUpload. A retried one that finds the upload gone may have completed it on a try whose answer
    /// was lost: the object then stands at the key with the size sent and the ETag of these parts (or, where part
    /// ETags are not MD5s, a multipart ETag of as many parts).
    private func completeUpload() throws(S3Error) {
        let ordered = parts.sorted { $0.number < $1.number }
        do {
            try client.completeMultipartUpload(location, uploadID: uploadID!, parts: ordered)
        } catch where error.code == .noSuchUpload && client.lastTries > 1 {
            guard let placed = try? client.head(location), placed.size == bytesSent else { throw error }
            let found = placed.etag.trimmingQuotes
            if let expected = MultipartETag.of(parts: ordered.map(\.etag)) {
                guard found == expected else { throw error }
            } else {
                guard found.hasSuffix("-\(parts.count)") else { throw error }
            }
        }
    }

    /// Uploads of this key that a CreateMultipartUpload retried after a lost answer may have made: those begun while
    /// it ran (listed after it, not before), other than the one it returned. Aborted, so no part is left billed.
    /// Uploads that were there before are someone else's (a writer of the same key, a coordinator that died), and stay.
    private func abortStrays(existing: Set<String>) {
        guard let pending = try? client.listMultipartUploads(bucket: location.bucket, prefix: location.key) else { return }
        for stray in pending where stray.key == location.key && stray.uploadID != uploadID && !existing.contains(stray.uploadID) {
            try? client.abortMultipartUpload(location, uploadID: stray.uploadID)
        }
    }

    private func upload(_ part: [UInt8], number given: Int? = nil) throws(S3Error) {
        let number = given ?? firstWritten + parts.count
        guard number <= Self.maximumParts else {
            throw S3Error(.tooManyParts, object: location.description, detail: "more than \(Self.maximumParts) parts of \(partSize) bytes")
        }
        let id: String
        if let uploadID { id = uploadID } else {
            // The key's unfinished uploads before, to tell strays a retried create made from others' uploads.
            let existing = (try? client.listMultipartUploads(bucket: location.bucket, prefix: location.key)).map { Set($0.map(\.uploadID)) }
            id = try client.createMultipartUpload(location)
            uploadID = id
            if client.lastTries > 1, let existing { abortStrays(existing: existing) }
        }
        parts.append((number, try client.uploadPart(location, uploadID: id, number: number, body: part)))
        bytesSent += Int64(part.count)
    }
}
