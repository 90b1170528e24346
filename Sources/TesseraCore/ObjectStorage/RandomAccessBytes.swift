/// Bytes read at any offset: how libavformat reads an input that is not a local file (an object in S3).
/// Blocking; used by one thread at a time.
public protocol RandomAccessBytes: AnyObject {
    var size: Int64 { get }
    /// Up to `buffer.count` bytes at `offset` into `buffer`; 0 at the end. Throws what stops the read.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}
