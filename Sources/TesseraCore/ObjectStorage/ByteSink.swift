/// Where a muxer's bytes go when they go to no file: each write lands at the offset the muxer is at, and the
/// muxer may seek back to fill in what it learns at the end (a box's size, a reserved index).
public protocol ByteSink: AnyObject {
    /// Takes `bytes` at `offset`. Throws what stops the output; the muxer then fails with an I/O error.
    func write(at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws
}
