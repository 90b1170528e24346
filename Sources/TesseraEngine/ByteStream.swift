import Foundation
import TesseraCore

/// Bytes handed from the thread that makes them to a thread that reads them as a file: its first bytes (`front`)
/// are known in advance, the rest arrives in order. At most `capacity` bytes wait; the writer blocks beyond that.
/// The reader reads forward only (skipping forward by discarding), as libavformat reads a pipe.
final class ByteStream: RandomAccessBytes, @unchecked Sendable {
    enum Failure: Error, Equatable {
        /// The reader asked for bytes it had already passed.
        case readBack(at: Int64, streamAt: Int64)
        /// The reader stopped before the writer ended.
        case readerGone
    }

    let size: Int64
    private let front: [UInt8]
    private let capacity: Int
    private let condition = NSCondition()
    private var chunks: [[UInt8]] = []
    /// How far into `chunks[0]` the reader is.
    private var taken = 0
    private var waiting = 0
    /// The file offset of the next byte the reader gets from the stream.
    private var next: Int64
    private var ended = false
    private var writerFailure: (any Error)?
    private var readerGone = false
    private var readerFailed = false

    init(front: [UInt8], size: Int64, capacity: Int = 2 << 20) {
        (self.front, self.size, self.capacity) = (front, size, capacity)
        next = Int64(front.count)
    }

    // MARK: the writer

    /// Adds the next bytes; blocks while `capacity` bytes wait. Throws when the reader stopped on a failure;
    /// drops them when it finished (it read all it wanted).
    func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard !bytes.isEmpty else { return }
        condition.lock()
        defer { condition.unlock() }
        while waiting >= capacity, !readerGone { condition.wait() }
        if readerGone {
            if readerFailed { throw .readerGone }
            return
        }
        chunks.append(Array(bytes))
        waiting += bytes.count
        condition.broadcast()
    }

    /// No more bytes come; with `failure`, the reader's next read throws it.
    func end(failure: (any Error)? = nil) {
        condition.lock()
        ended = true
        writerFailure = failure
        condition.broadcast()
        condition.unlock()
    }

    // MARK: the reader

    /// The reader is done (`failed`: on a failure): the writer no longer waits for it.
    func close(failed: Bool) {
        condition.lock()
        readerGone = true
        readerFailed = failed
        chunks = []
        waiting = 0
        condition.broadcast()
        condition.unlock()
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        if offset < Int64(front.count) {
            let count = min(buffer.count, front.count - Int(offset))
            front.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
            return count
        }
        condition.lock()
        defer { condition.unlock() }
        guard offset >= next else { throw Failure.readBack(at: offset, streamAt: next) }
        while true {
            while waiting == 0, !ended { condition.wait() }
            if let writerFailure { throw writerFailure }
            if waiting == 0 { return 0 }
            let first = chunks[0]
            let available = first.count - taken
            let skip = Int(min(Int64(available), offset - next))
            let count = skip > 0 ? 0 : min(buffer.count, available)
            if count > 0 {
                first.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[taken..<taken + count])) }
            }
            let used = skip + count
            taken += used
            waiting -= used
            next += Int64(used)
            if taken == first.count {
                chunks.removeFirst()
                taken = 0
            }
            condition.broadcast()
            if count > 0 { return count }
        }
    }
}
