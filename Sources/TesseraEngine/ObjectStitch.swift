import FFmpegKit
import Foundation
import S3Kit
import TesseraCore

/// One MP4 stitched straight into an S3 multipart upload and verified on its way, with no local copy. A first
/// stitch into nothing measures the index (moov) with room to spare; the second reserves exactly the room it needs
/// at the front (movenc's `moov_size`), uploads the media part by part as it is written, and hands the same bytes
/// to the verifier, which reads them behind the index predicted from the first stitch. Part 1, the front the muxer
/// fills in last, is held back: the object appears only at `PendingObject.complete()`.
public enum ObjectStitch {
    public struct Timings: Sendable {
        /// Both stitches.
        public var stitch: Double = 0
        /// Waiting for the verifier once the media was written, and any stitch made for it alone.
        public var verification: Double = 0
        /// Stitches made: 3 when the muxer wrote another front than the one predicted and the verifier read again.
        public var passes = 0

        public init() {}
    }

    /// - Parameter partSize: the upload's part size; by default chosen from the measured size.
    public static func stitch(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment, audio: AudioTrack?,
                              expectation: Verifier.Expectation, to location: S3Location, client: S3Client,
                              partSize: Int? = nil, timings: inout Timings) throws(TesseraError) -> PendingObject {
        let started = Date()
        let index = try measure(plan: plan, loadSegment: loadSegment, audio: audio, name: location.description)
        timings.passes = 1
        timings.stitch = Date().timeIntervalSince(started)
        return try stream(plan: plan, loadSegment: loadSegment, audio: audio, expectation: expectation, index: index,
                          to: location, client: client, partSize: partSize, timings: &timings)
    }

    /// The stitch into the upload, verified, with the front `index` predicts.
    static func stream(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment, audio: AudioTrack?,
                       expectation: Verifier.Expectation, index: ReservedIndex, to location: S3Location, client: S3Client,
                       partSize: Int?, timings: inout Timings) throws(TesseraError) -> PendingObject {
        let object = location.description
        let started = Date()
        let partSize = partSize ?? S3MultipartUpload.partSize(expectedSize: index.size)
        // Part 1 holds the whole front, at least S3's smallest part; its size in whole MiB.
        let firstPartSize = max(S3MultipartUpload.minimumPartSize, ((index.mediaStart + (1 << 20) - 1) >> 20) << 20)
        let upload = S3MultipartUpload(client: client, location: location, partSize: partSize, holdingFirstPart: true)
        var pass: Pass
        do throws(TesseraError) {
            timings.passes += 1
            pass = try Pass.run(plan: plan, loadSegment: loadSegment, audio: audio, expectation: expectation, front: index.front,
                                size: index.size, reserve: index.reserve, name: object, firstPartSize: firstPartSize, partSize: partSize,
                                upload: upload, timings: &timings)
            // The verifier read the predicted front: if the muxer wrote another, verify again behind the one it wrote
            // (a media stitch of the same bytes, part by part, uploading nothing).
            if pass.front != index.front {
                let again = Date(), waited = timings.verification
                timings.passes += 1
                let check = try Pass.run(plan: plan, loadSegment: loadSegment, audio: audio, expectation: expectation, front: pass.front,
                                         size: index.size, reserve: index.reserve, name: object, firstPartSize: firstPartSize,
                                         partSize: partSize, upload: nil, timings: &timings)
                timings.verification = waited + Date().timeIntervalSince(again)
                guard check.digests == pass.digests else {
                    throw TesseraError(.verification, object, "a second stitch of the same segments made other bytes")
                }
            }
        } catch {
            upload.abort()
            throw error
        }
        timings.stitch += Date().timeIntervalSince(started) - timings.verification
        return PendingObject(upload: upload, first: pass.firstPart, location: location)
    }

    /// The index with exactly the room it needs, from a stitch into nothing with room to spare.
    static func measure(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment, audio: AudioTrack?,
                        name: String) throws(TesseraError) -> ReservedIndex {
        let reserved = ReservedIndex.upperBound(samples: plan.outputFrameCount + (audio?.packets.count ?? 0))
        let front = FrontCapture(limit: reserved + (64 << 10))
        _ = try Stitcher.stitch(plan: plan, loadSegment: loadSegment, audio: audio, name: name,
                                header: [("moov_size", "\(reserved)")]) { () throws(FFmpegError) in try MediaOutput(sink: front, name: name) }
        guard let index = ReservedIndex(measured: front.bytes, size: front.size, reserved: reserved) else {
            throw TesseraError(.stitch, name, "the index does not fit the room reserved for it (\(reserved) bytes)")
        }
        return index
    }

    /// One stitch into the upload (or into digests alone) while the verifier reads the same bytes.
    struct Pass {
        var front: [UInt8]
        var firstPart: [UInt8]
        var digests: [UInt64]

        static func run(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment, audio: AudioTrack?,
                        expectation: Verifier.Expectation, front: [UInt8], size: Int64, reserve: Int, name: String,
                        firstPartSize: Int, partSize: Int, upload: S3MultipartUpload?, timings: inout Timings) throws(TesseraError) -> Pass {
            let stream = ByteStream(front: front, size: size)
            let sink = StreamedUploadSink(mediaStart: front.count, firstPartSize: firstPartSize, partSize: partSize, upload: upload, stream: stream)
            let verdict = Locked<Result<Verifier.Report, TesseraError>?>(nil)
            let boxes = MP4Layout.topLevelBoxes(fileSize: size) { offset, count in
                offset < front.count ? Array(front[Int(offset)..<min(front.count, Int(offset) + count)]) : []
            }
            let verifier = startThread(name: "tessera-verify") {
                let result = Result { () throws(TesseraError) in
                    try Verifier.verify(name, boxes: boxes, expectation) { () throws(FFmpegError) in
                        // The index describes the streams: no search for stream information, which would hold
                        // seconds of packets while the stitch holds its segments.
                        try MediaInput(source: stream, name: name, probedStreams: expectation.audio == nil ? 1 : 2, sequential: true)
                    }
                }
                stream.close(failed: (try? result.get()) == nil)
                verdict.withValue { $0 = result }
            }
            do throws(TesseraError) {
                _ = try Stitcher.stitch(plan: plan, loadSegment: loadSegment, audio: audio, name: name,
                                        header: [("moov_size", "\(reserve)")]) { () throws(FFmpegError) in try MediaOutput(sink: sink, name: name) }
                do { try sink.finish() } catch { throw sinkFailure(error, name) }
                guard sink.size == size else {
                    throw TesseraError(.stitch, name, "the stitch made \(sink.size) bytes where its index predicted \(size)")
                }
                stream.end()
            } catch {
                stream.end(failure: error)
                verifier.wait()
                // The verifier stopped first: its verdict says why.
                if case .failure(let verification)? = verdict.current, sink.failure as? ByteStream.Failure == .readerGone { throw verification }
                if let failure = sink.failure { throw sinkFailure(failure, name) }
                throw error
            }
            let waited = Date()
            verifier.wait()
            timings.verification += Date().timeIntervalSince(waited)
            guard let verdict = verdict.current else { throw TesseraError(.verification, name, "the verifier gave no verdict") }
            _ = try verdict.get()
            let written = Array(sink.firstPart.prefix(front.count))
            return Pass(front: written, firstPart: sink.firstPart, digests: sink.digests)
        }

        private static func sinkFailure(_ error: any Error, _ name: String) -> TesseraError {
            switch error {
            case let error as S3Error: .output(error.object, error.detail)
            case let error as TesseraError: error
            default: TesseraError(.stitch, name, "streaming the output failed (\(error))")
            }
        }
    }
}

/// A stitched object waiting for its first part: `complete()` makes it appear, `abort()` leaves nothing.
public final class PendingObject: @unchecked Sendable {
    public let location: S3Location
    private let upload: S3MultipartUpload
    private let first: [UInt8]

    init(upload: S3MultipartUpload, first: [UInt8], location: S3Location) {
        (self.upload, self.first, self.location) = (upload, first, location)
    }

    /// Dropped without a verdict (the job's thread left on an error): nothing is left billed.
    deinit { upload.abort() }

    public func complete() throws(TesseraError) {
        do { try upload.complete(first: first) } catch { throw .output(error.object, error.detail) }
    }

    public func abort() { upload.abort() }
}

/// A sink that keeps the first `limit` bytes and the size: the measuring stitch's output.
final class FrontCapture: ByteSink {
    let limit: Int
    private(set) var bytes: [UInt8] = []
    private(set) var size: Int64 = 0

    init(limit: Int) { self.limit = limit }

    func write(at offset: Int64, _ written: UnsafeRawBufferPointer) throws {
        let end = offset + Int64(written.count)
        size = max(size, end)
        guard offset < Int64(limit) else { return }
        let upTo = Int(min(end, Int64(limit)))
        if bytes.count < upTo { bytes += [UInt8](repeating: 0, count: upTo - bytes.count) }
        bytes.withUnsafeMutableBytes {
            UnsafeMutableRawBufferPointer(rebasing: $0[Int(offset)..<upTo]).copyMemory(from: UnsafeRawBufferPointer(rebasing: written[0..<upTo - Int(offset)]))
        }
    }
}
