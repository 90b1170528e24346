import CFFmpeg
import CTesseraShim
import Foundation
import TesseraCore

/// A custom AVIOContext over `RandomAccessBytes`: libavformat reads and seeks through it, asking only for the
/// bytes it needs. A failed read is kept (`failure`) so that the caller can say what went wrong, not just EIO.
final class SourceIO {
    static let bufferSize = 64 << 10
    let source: any RandomAccessBytes
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    private var position: Int64 = 0
    private(set) var failure: (any Error)?

    /// `sequential`: libavformat is told the bytes cannot be sought, so it reads them in file order (skipping
    /// forward by reading), as it reads a pipe.
    init(_ source: any RandomAccessBytes, sequential: Bool = false) throws(FFmpegError) {
        self.source = source
        guard let buffer = av_malloc(Self.bufferSize) else { throw FFmpegError("cannot allocate the read buffer", call: "av_malloc") }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), 0, opaque, { opaque, buffer, count in
            Unmanaged<SourceIO>.fromOpaque(opaque!).takeUnretainedValue().read(buffer!, Int(count))
        }, nil, { opaque, offset, whence in
            Unmanaged<SourceIO>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
        })
        guard context != nil else {
            av_free(buffer)
            throw FFmpegError("cannot allocate the I/O context", call: "avio_alloc_context")
        }
        if sequential { context!.pointee.seekable = 0 }
    }

    deinit {
        guard context != nil else { return }
        // libavformat may have replaced the buffer it was given: free the one the context holds now.
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
    }

    private func read(_ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int32 {
        guard position < source.size else { return tessera_averror_eof() }
        do {
            let read = try source.read(at: position, into: UnsafeMutableRawBufferPointer(start: buffer, count: count))
            guard read > 0 else { return tessera_averror_eof() }
            position += Int64(read)
            return Int32(read)
        } catch {
            failure = error
            return -EIO
        }
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return source.size }
        let target: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position + offset
        case SEEK_END: target = source.size + offset
        default: return -1
        }
        guard target >= 0 else { return -1 }
        position = target
        return target
    }
}
