import Foundation
import S3Kit
import TesseraCore

/// Where `ObjectStitch` muxes: the front of the file (part 1, which holds the index the muxer writes last) is kept
/// in memory; every byte after it goes out in order, to the upload part by part (with `upload` nil only counted),
/// and every media byte to the verifier's stream. Each part's digest is kept so that a second stitch can show it
/// made the same bytes.
final class StreamedUploadSink: ByteSink {
    enum Failure: Error, Equatable {
        /// The muxer went back to bytes already sent.
        case rewrite(at: Int64)
    }

    let mediaStart: Int
    private(set) var firstPart: [UInt8] = []
    private let firstPartSize: Int
    private let partSize: Int
    private let upload: S3MultipartUpload?
    private let stream: ByteStream
    /// The file offset one past the last byte sent on.
    private var sent: Int64
    private var part: [UInt8] = []
    /// XXH64 of the media in part 1, then of each later part.
    private(set) var digests: [UInt64] = []
    /// The file's size so far: one past the last byte sent on.
    var size: Int64 { sent }
    /// The first error the sink threw (the upload's, or the verifier's stream gone).
    private(set) var failure: (any Error)?

    init(mediaStart: Int, firstPartSize: Int, partSize: Int, upload: S3MultipartUpload?, stream: ByteStream) {
        precondition(firstPartSize >= mediaStart)
        (self.mediaStart, self.firstPartSize, self.partSize, self.upload, self.stream) = (mediaStart, firstPartSize, partSize, upload, stream)
        sent = Int64(mediaStart)
        // Grown once: doubling as they fill would hold each part twice over for a moment.
        firstPart.reserveCapacity(firstPartSize)
        part.reserveCapacity(partSize)
    }

    func write(at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws {
        do {
            try take(at: offset, bytes)
        } catch {
            if failure == nil { failure = error }
            throw error
        }
    }

    private func take(at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws {
        let end = offset + Int64(bytes.count)
        // The front: kept, and rewritten as the muxer likes.
        if offset < Int64(mediaStart) {
            let upTo = Int(min(end, Int64(mediaStart)))
            if firstPart.count < upTo { firstPart += [UInt8](repeating: 0, count: upTo - firstPart.count) }
            firstPart.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[Int(offset)..<upTo]).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<upTo - Int(offset)])) }
        }
        guard end > Int64(mediaStart) else { return }
        let from = max(offset, Int64(mediaStart))
        guard from == sent else { throw Failure.rewrite(at: from) }
        let media = UnsafeRawBufferPointer(rebasing: bytes[Int(from - offset)...])
        try stream.append(media)
        sent = end
        // The rest of part 1, then later parts.
        var rest = media
        if firstPart.count < firstPartSize {
            let count = min(rest.count, firstPartSize - firstPart.count)
            firstPart += rest[0..<count]
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if firstPart.count == firstPartSize { digests.append(Self.digest(firstPart[mediaStart...])) }
        }
        while !rest.isEmpty {
            let count = min(rest.count, partSize - part.count)
            part += rest[0..<count]
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if part.count == partSize {
                try send(part)
                part.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Sends what is left after the last full part; the digest of part 1's media if it never filled.
    func finish() throws {
        if firstPart.count < firstPartSize { digests.append(Self.digest(firstPart[mediaStart...])) }
        if !part.isEmpty { try send(part) }
        part = []
    }

    private func send(_ bytes: [UInt8]) throws {
        digests.append(Self.digest(bytes[...]))
        try upload?.write(bytes)
    }

    private static func digest(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { PayloadChecksum.value($0) }
    }
}
