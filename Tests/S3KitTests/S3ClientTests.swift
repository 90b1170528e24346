import Crypto
import Foundation
import Testing
@testable import S3Kit
import TesseraCore
import TesseraTestSupport

/// The S3 client against moto with authentication on: a wrong signature fails as S3 fails it, ranges and the
/// ETag pin hold, multipart uploads complete at the 5 MiB limit and leave nothing behind when aborted.
@Suite(.serialized) final class S3ClientTests {
    let moto: MotoServer
    let client: S3Client

    init() throws {
        moto = try MotoServer()
        client = try moto.client()
        try client.createBucket("media")
    }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    @Test func putHeadAndRangedGets() throws {
        let data = Self.bytes(1 << 20, seed: 1)
        let object = S3Location(bucket: "media", key: "dir/in put.mov")
        let etag = try client.put(object, body: data)
        let info = try client.head(object)
        #expect(info == S3ObjectInfo(size: Int64(data.count), etag: etag))
        for range: Range<Int64> in [0..<1, 0..<4096, 500_000..<700_001, Int64(data.count - 1)..<Int64(data.count)] {
            #expect(try client.get(object, range: range, ifMatch: info.etag) == Array(data[Int(range.lowerBound)..<Int(range.upperBound)]))
        }
    }

    @Test func aWrongSecretOrUnknownKeyIsRefused() throws {
        let object = S3Location(bucket: "media", key: "k")
        try client.put(object, body: [1, 2, 3])
        let wrongSecret = AWSCredentials(accessKeyID: moto.admin.accessKeyID, secretAccessKey: "not-the-secret")
        let failure = #expect(throws: S3Error.self) { try self.moto.client(wrongSecret).get(object, range: 0..<3) }
        #expect(failure?.code == .credentialsRefused)
        #expect(failure?.description.hasPrefix("s3://media/k: ") == true)
        #expect(failure?.description.contains("not-the-secret") == false)
        let unknown = AWSCredentials(accessKeyID: "AKIAUNKNOWN000000000", secretAccessKey: "x")
        #expect(throws: S3Error.self) { try self.moto.client(unknown).head(object) }
        // A HEAD's refusal has no body: the client learns why from a one-byte GET.
        let headRefused = #expect(throws: S3Error.self) { try self.moto.client(wrongSecret).head(object) }
        #expect(headRefused?.code == .credentialsRefused)
    }

    @Test func aMissingObjectAndAMissingBucketSayWhich() throws {
        let missingKey = #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: "absent.mov")) }
        #expect(missingKey?.code == .notFound)
        let missingBucket = #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "nobucket", key: "in.mov")) }
        #expect(missingBucket?.code == .noSuchBucket)
        let getFromMissingBucket = #expect(throws: S3Error.self) { try self.client.get(S3Location(bucket: "nobucket", key: "x"), range: 0..<1) }
        #expect(getFromMissingBucket?.code == .noSuchBucket)
    }

    /// An input pinned by its ETag fails, naming the object, once the object is replaced.
    @Test func aReplacedObjectFailsThePinnedRead() throws {
        let object = S3Location(bucket: "media", key: "in.mov")
        try client.put(object, body: Self.bytes(10_000, seed: 2))
        let pinned = try client.head(object).etag
        try client.put(object, body: Self.bytes(10_000, seed: 3))
        let failure = #expect(throws: S3Error.self) { try self.client.get(object, range: 0..<100, ifMatch: pinned) }
        #expect(failure?.code == .objectChanged)
        #expect(failure?.description.hasPrefix("s3://media/in.mov: the object changed") == true)
    }

    @Test func aBucketThatRefusesWritesSaysAccessDenied() throws {
        let reader = try moto.client(moto.reader)
        let object = S3Location(bucket: "media", key: "readable")
        try client.put(object, body: [9, 9])
        #expect(try reader.get(object, range: 0..<2) == [9, 9])
        let put = #expect(throws: S3Error.self) { try reader.put(S3Location(bucket: "media", key: "out.mp4"), body: [1]) }
        #expect(put?.code == .accessDenied)
        let upload = S3MultipartUpload(client: reader, location: S3Location(bucket: "media", key: "out.mp4"), partSize: S3MultipartUpload.minimumPartSize)
        let multipart = #expect(throws: S3Error.self) {
            try upload.write(Self.bytes(S3MultipartUpload.minimumPartSize, seed: 4))
            try upload.complete()
        }
        #expect(multipart?.code == .accessDenied)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
        #expect(throws: S3Error.self) { try self.client.head(S3Location(bucket: "media", key: "out.mp4")) }
    }

    /// Parts of exactly 5 MiB and a one-byte last part, written in uneven pieces.
    @Test func multipartAtTheFiveMiBLimit() throws {
        let data = Self.bytes(2 * S3MultipartUpload.minimumPartSize + 1, seed: 5)
        let object = S3Location(bucket: "media", key: "out.mp4")
        let upload = S3MultipartUpload(client: client, location: object, partSize: S3MultipartUpload.minimumPartSize)
        var offset = 0
        for size in [1, 3_000_000, 4_000_000, 1 << 20] {
            try upload.write(data[offset..<offset + size])
            offset += size
        }
        try upload.write(data[offset...])
        #expect(upload.partsUploaded == 2)
        #expect(throws: S3Error.self) { try self.client.head(object) }
        #expect(try upload.complete() == 3)
        #expect(try client.head(object).size == Int64(data.count))
        #expect(try client.get(object, range: 0..<Int64(data.count)) == data)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
        // The ETag a client that lost Complete's answer expects: the MD5 of the parts' MD5s, and their count.
        let parts = stride(from: 0, to: data.count, by: S3MultipartUpload.minimumPartSize).map {
            "\"" + Array(Insecure.MD5.hash(data: data[$0..<min(data.count, $0 + S3MultipartUpload.minimumPartSize)])).map { String(format: "%02x", $0) }.joined() + "\""
        }
        #expect(MultipartETag.of(parts: parts) == (try client.head(object).etag.trimmingQuotes))
        #expect(MultipartETag.of(parts: ["\"not-an-md5\""]) == nil)
    }

    /// Part 1 held back and uploaded last (the front of a file written last) makes the object in order; an object
    /// that never needed a second part is one PUT.
    @Test func aHeldFirstPartGoesLastAndTheObjectIsInOrder() throws {
        let first = Self.bytes(S3MultipartUpload.minimumPartSize, seed: 8), rest = Self.bytes(S3MultipartUpload.minimumPartSize + 7, seed: 9)
        let object = S3Location(bucket: "media", key: "held.mp4")
        let upload = S3MultipartUpload(client: client, location: object, partSize: S3MultipartUpload.minimumPartSize, holdingFirstPart: true)
        try upload.write(rest)
        #expect(throws: S3Error.self) { try self.client.head(object) }
        #expect(try upload.complete(first: first) == 3)
        #expect(try client.get(object, range: 0..<Int64(first.count + rest.count)) == first + rest)
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)

        let small = S3Location(bucket: "media", key: "small.mp4")
        let alone = S3MultipartUpload(client: client, location: small, partSize: S3MultipartUpload.minimumPartSize, holdingFirstPart: true)
        #expect(try alone.complete(first: [1, 2, 3]) == 1)
        #expect(try client.get(small, range: 0..<3) == [1, 2, 3])
    }

    @Test func anAbortedUploadLeavesNoObjectAndNoParts() throws {
        let object = S3Location(bucket: "media", key: "failed.mp4")
        let upload = S3MultipartUpload(client: client, location: object, partSize: S3MultipartUpload.minimumPartSize)
        try upload.write(Self.bytes(S3MultipartUpload.minimumPartSize + 10, seed: 6))
        #expect(try client.listMultipartUploads(bucket: "media").map(\.key) == ["failed.mp4"])
        upload.abort()
        #expect(try client.listMultipartUploads(bucket: "media").isEmpty)
        let gone = #expect(throws: S3Error.self) { try self.client.head(object) }
        #expect(gone?.code == .notFound)
    }

    /// A presigned GET reads a range with no credentials at all, checked as S3 checks it (moto with authentication,
    /// behind `PresignedFront`); a damaged signature, an expired URL and a replaced object (If-Match) are refused.
    @Test func presignedRangesNeedNoCredentials() throws {
        let checked = try MotoServer(presigned: true)
        let owner = try checked.client()
        try owner.createBucket("media")
        let data = Self.bytes(100_000, seed: 7)
        let object = S3Location(bucket: "media", key: "seg ment.mov")
        try owner.put(object, body: data)
        let url = owner.presignedGET(object, expires: 3600)
        #expect(url.contains("X-Amz-Signature=") && !url.contains(checked.admin.secretAccessKey))
        let reader = try S3PresignedReader(retry: S3RetryPolicy(attempts: 1, baseDelay: 0, maxDelay: 0))
        #expect(try reader.get(url, range: 1000..<2000, object: object.description) == Array(data[1000..<2000]))
        let damaged = String(url.dropLast()) + (url.hasSuffix("0") ? "1" : "0")
        let refused = #expect(throws: S3Error.self) { try reader.get(damaged, range: 0..<10, object: object.description) }
        #expect(refused?.code == .credentialsRefused && refused?.status == 403)
        let stale = owner.presignedGET(object, expires: 60, now: Int64(Date().timeIntervalSince1970) - 120)
        let expired = #expect(throws: S3Error.self) { try reader.get(stale, range: 0..<10, object: object.description) }
        #expect(expired?.code == .accessDenied && expired?.status == 403)
        let pinned = try owner.head(object).etag
        try owner.put(object, body: Self.bytes(100_000, seed: 8))
        let replaced = #expect(throws: S3Error.self) { try reader.get(url, range: 0..<10, ifMatch: pinned, object: object.description) }
        #expect(replaced?.code == .objectChanged)
    }

    /// A server that is not there: the tries are bounded and the error names the object.
    @Test func droppedConnectionsAreRetriedThenNamed() throws {
        var configuration = try moto.configuration()
        configuration.endpoint = S3Endpoint(url: "http://127.0.0.1:1")!
        var waits: [Double] = []
        let dead = try S3Client(configuration: configuration, retry: S3RetryPolicy(attempts: 3, baseDelay: 0.01, maxDelay: 1), sleep: { waits.append($0) })
        let failure = #expect(throws: S3Error.self) { try dead.head(S3Location(bucket: "media", key: "in.mov")) }
        #expect(failure?.code == .transport)
        #expect(failure?.description.hasPrefix("s3://media/in.mov: ") == true)
        #expect(failure?.description.hasSuffix("after 3 tries") == true)
        #expect(waits.count == 2)
    }
}

/// Retries against a store that answers 503 SlowDown: back-off until it recovers, or a bounded failure.
@Suite struct S3RetryTests {
    static func client(_ server: FaultServer, attempts: Int, waits: @escaping (Double) -> Void) throws -> S3Client {
        let configuration = S3Configuration(credentials: AWSCredentials(accessKeyID: "AK", secretAccessKey: "s"), region: "us-east-1",
                                            endpoint: S3Endpoint(url: server.endpoint)!)
        return try S3Client(configuration: configuration, retry: S3RetryPolicy(attempts: attempts, baseDelay: 0.01, maxDelay: 1), sleep: waits)
    }

    /// How many back-off waits the client asked for.
    final class Waits { var count = 0 }

    @Test func slowDownIsRetriedUntilTheStoreRecovers() throws {
        let server = try FaultServer(failures: 2)
        let waits = Waits()
        let client = try Self.client(server, attempts: 4) { _ in waits.count += 1 }
        #expect(try client.head(S3Location(bucket: "b", key: "k")) == S3ObjectInfo(size: 5, etag: "\"e1\""))
        #expect(waits.count == 2)
        #expect(try client.get(S3Location(bucket: "b", key: "k"), range: 0..<5) == Array("hello".utf8))
    }

    @Test func slowDownWithoutEndFailsAfterTheLastTryNamingTheObject() throws {
        let server = try FaultServer(failures: 100)
        let waits = Waits()
        let client = try Self.client(server, attempts: 3) { _ in waits.count += 1 }
        let failure = #expect(throws: S3Error.self) { try client.get(S3Location(bucket: "b", key: "in.mov"), range: 0..<5) }
        #expect(failure?.code == .throttled)
        #expect(failure?.description.hasPrefix("s3://b/in.mov: S3 asked to slow down") == true)
        #expect(failure?.description.hasSuffix("after 3 tries") == true)
        #expect(waits.count == 2)
    }
}

extension S3ClientTests {
    /// `data` put at `object`, and a reader of it pinned to what was put.
    func reader(of object: S3Location, holding data: [UInt8]) throws -> S3ObjectReader {
        try client.put(object, body: data)
        return S3ObjectReader(client: client, location: object, object: try client.head(object))
    }

    /// The reader behind an s3:// input: the bytes as stored wherever it reads, a first read that fetches little,
    /// sequential reads in growing windows, and a replaced object refused.
    @Test func theObjectReaderReadsAheadAndStaysPinned() throws {
        let data = Self.bytes(3 << 20, seed: 7)
        let object = S3Location(bucket: "media", key: "reader.bin")
        let reader = try reader(of: object, holding: data)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let first = try buffer.withUnsafeMutableBytes { try reader.read(at: 1_000_000, into: $0) }
        #expect(Array(buffer[..<first]) == Array(data[1_000_000..<(1_000_000 + first)]))
        #expect(reader.fetchedBytes == Int64(S3ObjectReader.firstFetch))
        var offset: Int64 = 0, whole: [UInt8] = []
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(at: offset, into: $0) }
            if count == 0 { break }
            whole += buffer[..<count]
            offset += Int64(count)
        }
        #expect(whole == data)
        #expect(reader.requests < 12, "\(reader.requests) GETs")
        try client.put(object, body: [1, 2, 3])
        let changed = #expect(throws: S3Error.self) { try buffer.withUnsafeMutableBytes { try reader.read(at: 0, into: $0) } }
        #expect(changed?.code == .objectChanged)
    }

    /// One stream of an interleaved file read alone: short skips forward grow the fetches from where the window
    /// ended (few GETs), a long jump fetches little where it lands.
    @Test func shortSkipsReadOnAndLongJumpsFetchLittle() throws {
        let data = Self.bytes(12 << 20, seed: 11)
        let reader = try reader(of: S3Location(bucket: "media", key: "skips.bin"), holding: data)
        var buffer = [UInt8](repeating: 0, count: 4096)
        for offset in stride(from: 0, to: 2 << 20, by: 100 << 10) {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(at: Int64(offset), into: $0) }
            #expect(Array(buffer[..<count]) == Array(data[offset..<(offset + count)]))
        }
        // 21 reads 100 KiB apart: one GET each with a fresh window for every skip; reading on, 64 KiB doubling.
        #expect(reader.requests <= 6, "\(reader.requests) GETs")
        let (requests, fetched) = (reader.requests, reader.fetchedBytes)
        let far = (12 << 20) - 10_000
        let count = try buffer.withUnsafeMutableBytes { try reader.read(at: Int64(far), into: $0) }
        #expect(Array(buffer[..<count]) == Array(data[far..<(far + count)]))
        #expect(reader.requests == requests + 1)
        #expect(reader.fetchedBytes - fetched == 10_000, "a jump past the next fetch reads from where it lands")
    }
}
