import CFFmpeg
import CTesseraShim
import TesseraCore

/// Fragmented output in memory: the muxer writes into a dynamic buffer and the caller takes the bytes at each
/// point it chooses (after the header: the init segment; after each flushed fragment: one media segment).
extension MediaOutput {
    /// A muxer of `format` writing into memory; `takeBytes()` hands out what it wrote since the last call.
    public convenience init(inMemory format: String) throws(FFmpegError) {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, nil, format, nil), "avformat_alloc_output_context2(\(format))")
        self.init(memoryContext: ctx!)
        try check(avio_open_dyn_buf(&ctx!.pointee.pb), "avio_open_dyn_buf")
    }

    /// The bytes written since the last call; the muxer goes on writing into a fresh buffer.
    public func takeBytes() throws(FFmpegError) -> [UInt8] {
        precondition(inMemory, "takeBytes() needs a MediaOutput made with init(inMemory:)")
        guard let ctx = context, let pb = ctx.pointee.pb else { return [] }
        var buffer: UnsafeMutablePointer<UInt8>?
        let size = avio_close_dyn_buf(pb, &buffer)
        ctx.pointee.pb = nil
        defer { av_free(buffer) }
        let bytes = size > 0 && buffer != nil ? Array(UnsafeBufferPointer(start: buffer, count: Int(size))) : []
        try check(avio_open_dyn_buf(&ctx.pointee.pb), "avio_open_dyn_buf")
        return bytes
    }

    /// Writes a packet given in `timeBase` without the interleaving queue, so that it lands in the fragment being
    /// built now (`av_interleaved_write_frame` may hold it back past the next `flushFragment()`).
    public func writeNow(_ packet: Packet, stream: Int, timeBase: Rational) throws(FFmpegError) {
        prepare(packet, stream: stream, timeBase: timeBase)
        try check(av_write_frame(context, packet.raw), "av_write_frame")
    }

    /// Ends the fragment being built: a muxer that allows flushing (mp4 with `frag_custom`) writes its moof and
    /// mdat now.
    public func flushFragment() throws(FFmpegError) {
        try check(av_write_frame(context, nil), "av_write_frame(flush)")
    }

    /// Closes the dynamic buffer and drops what it holds (a trailer nobody asked for, or an abandoned output).
    func discardBuffer() {
        guard let ctx = context, let pb = ctx.pointee.pb else { return }
        var buffer: UnsafeMutablePointer<UInt8>?
        _ = avio_close_dyn_buf(pb, &buffer)
        av_free(buffer)
        ctx.pointee.pb = nil
    }
}
