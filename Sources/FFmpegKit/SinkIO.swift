import CFFmpeg
import CTesseraShim
import TesseraCore

/// A custom AVIOContext writing into a `ByteSink`: libavformat writes and seeks through it as through a file.
/// The first failure is kept (`failure`) so that the caller can say what went wrong, not just EIO.
final class SinkIO {
    static let bufferSize = 256 << 10
    let sink: any ByteSink
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    private var position: Int64 = 0
    /// One past the furthest byte written: the size a seek asks for.
    private var end: Int64 = 0
    private(set) var failure: (any Error)?

    init(_ sink: any ByteSink) throws(FFmpegError) {
        self.sink = sink
        guard let buffer = av_malloc(Self.bufferSize) else { throw FFmpegError("cannot allocate the write buffer", call: "av_malloc") }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), 1, opaque, nil, { opaque, buffer, count in
            Unmanaged<SinkIO>.fromOpaque(opaque!).takeUnretainedValue().write(buffer!, Int(count))
        }, { opaque, offset, whence in
            Unmanaged<SinkIO>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
        })
        guard context != nil else {
            av_free(buffer)
            throw FFmpegError("cannot allocate the I/O context", call: "avio_alloc_context")
        }
    }

    deinit {
        guard context != nil else { return }
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
    }

    private func write(_ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int32 {
        guard failure == nil else { return -EIO }
        do {
            try sink.write(at: position, UnsafeRawBufferPointer(start: buffer, count: count))
        } catch {
            failure = error
            return -EIO
        }
        position += Int64(count)
        end = max(end, position)
        return Int32(count)
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return end }
        let target: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position + offset
        case SEEK_END: target = end + offset
        default: return -1
        }
        guard target >= 0 else { return -1 }
        position = target
        return target
    }
}
