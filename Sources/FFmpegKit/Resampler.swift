import CFFmpeg
import CTesseraShim

/// swresample to an encoder's format, rate and layout, with a FIFO that hands out frames of exactly the
/// encoder's frame size.
public final class Resampler {
    var swr: OpaquePointer?
    let fifo: OpaquePointer
    let encoder: Encoder

    public init(decoder: Decoder, encoder: Encoder) throws(FFmpegError) {
        self.encoder = encoder
        let dec = decoder.context, enc = encoder.context
        var swr: OpaquePointer?
        try check(swr_alloc_set_opts2(&swr, &enc.pointee.ch_layout, enc.pointee.sample_fmt, enc.pointee.sample_rate,
                                      &dec.pointee.ch_layout, dec.pointee.sample_fmt, dec.pointee.sample_rate, 0, nil),
                  "swr_alloc_set_opts2")
        self.swr = swr
        try check(swr_init(swr), "swr_init")
        guard let fifo = av_audio_fifo_alloc(enc.pointee.sample_fmt, enc.pointee.ch_layout.nb_channels, 4096) else {
            throw FFmpegError(code: tessera_averror_enomem(), call: "av_audio_fifo_alloc")
        }
        self.fifo = fifo
    }

    deinit {
        swr_free(&swr)
        av_audio_fifo_free(fifo)
    }

    /// Resamples `frame` (nil flushes the resampler) into the FIFO.
    public func push(_ frame: Frame?) throws(FFmpegError) {
        let inSamples = frame.map { Int32($0.sampleCount) } ?? 0
        let capacity = swr_get_out_samples(swr, inSamples)
        guard capacity > 0 else { return }
        let out = try encoder.makeAudioFrame(samples: Int(capacity))
        let converted = swr_convert(swr, out.raw.pointee.extended_data, capacity,
                                    frame.map { UnsafeMutablePointer(mutating: UnsafeRawPointer($0.raw.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)) },
                                    inSamples)
        try check(converted, "swr_convert")
        guard converted > 0 else { return }
        let planes = UnsafeMutableRawPointer(out.raw.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let written = av_audio_fifo_write(fifo, planes, converted)
        try check(written, "av_audio_fifo_write")
    }

    public var buffered: Int { Int(av_audio_fifo_size(fifo)) }

    /// Takes up to the encoder's frame size of samples from the FIFO.
    public func pop(maximum: Int) throws(FFmpegError) -> Frame? {
        let count = min(maximum, buffered)
        guard count > 0 else { return nil }
        let frame = try encoder.makeAudioFrame(samples: count)
        let planes = UnsafeMutableRawPointer(frame.raw.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        try check(av_audio_fifo_read(fifo, planes, Int32(count)), "av_audio_fifo_read")
        return frame
    }
}
