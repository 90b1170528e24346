import CFFmpeg
import CTesseraShim

/// swresample to an encoder's format, rate and layout, with a FIFO that hands out frames of exactly the
/// encoder's frame size. When the input's format, rate or layout changes mid-stream (broadcast
/// recordings switch 5.1 and stereo), the resampler is flushed and rebuilt for the new input.
public final class Resampler {
    var swr: OpaquePointer?
    let fifo: OpaquePointer
    let encoder: Encoder
    var input: (format: Int32, rate: Int32, layout: AVChannelLayout)

    public init(decoder: Decoder, encoder: Encoder) throws(FFmpegError) {
        self.encoder = encoder
        let dec = decoder.context
        guard let fifo = av_audio_fifo_alloc(encoder.context.pointee.sample_fmt, encoder.context.pointee.ch_layout.nb_channels, 4096) else {
            throw FFmpegError(code: tessera_averror_enomem(), call: "av_audio_fifo_alloc")
        }
        self.fifo = fifo
        input = (dec.pointee.sample_fmt.rawValue, dec.pointee.sample_rate, AVChannelLayout())
        try check(av_channel_layout_copy(&input.layout, &dec.pointee.ch_layout), "av_channel_layout_copy")
        try rebuild()
    }

    deinit {
        swr_free(&swr)
        av_channel_layout_uninit(&input.layout)
        av_audio_fifo_free(fifo)
    }

    func rebuild() throws(FFmpegError) {
        swr_free(&swr)
        let enc = encoder.context
        var next: OpaquePointer?
        try check(swr_alloc_set_opts2(&next, &enc.pointee.ch_layout, enc.pointee.sample_fmt, enc.pointee.sample_rate,
                                      &input.layout, AVSampleFormat(input.format), input.rate, 0, nil),
                  "swr_alloc_set_opts2")
        let initialised = swr_init(next)
        guard initialised >= 0 else {
            swr_free(&next)
            throw FFmpegError(code: initialised, call: "swr_init")
        }
        swr = next
    }

    /// Rebuilds for `frame` when its format, rate or channel layout differ from the current input.
    func follow(_ frame: Frame) throws(FFmpegError) {
        let f = frame.raw
        let same = f.pointee.format == input.format && f.pointee.sample_rate == input.rate
            && av_channel_layout_compare(&f.pointee.ch_layout, &input.layout) == 0
        guard !same else { return }
        try convert(nil)
        input.format = f.pointee.format
        input.rate = f.pointee.sample_rate
        av_channel_layout_uninit(&input.layout)
        try check(av_channel_layout_copy(&input.layout, &f.pointee.ch_layout), "av_channel_layout_copy")
        try rebuild()
    }

    /// Resamples `frame` (nil flushes the resampler) into the FIFO.
    public func push(_ frame: Frame?) throws(FFmpegError) {
        if let frame { try follow(frame) }
        try convert(frame)
    }

    func convert(_ frame: Frame?) throws(FFmpegError) {
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
        try check(av_audio_fifo_write(fifo, planes, converted), "av_audio_fifo_write")
    }

    /// Pushes what swresample still holds into the FIFO, so that the FIFO ends where the input ends.
    public func drain() throws(FFmpegError) {
        try convert(nil)
        try rebuild()
    }

    /// Appends `samples` of silence (at the output rate) to the FIFO: a gap in the source's timeline.
    public func pushSilence(samples: Int) throws(FFmpegError) {
        var left = samples
        while left > 0 {
            let n = min(left, 8192)
            let silence = try encoder.makeAudioFrame(samples: n)
            av_samples_set_silence(silence.raw.pointee.extended_data, 0, Int32(n), encoder.context.pointee.ch_layout.nb_channels,
                                   encoder.context.pointee.sample_fmt)
            let planes = UnsafeMutableRawPointer(silence.raw.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            try check(av_audio_fifo_write(fifo, planes, Int32(n)), "av_audio_fifo_write")
            left -= n
        }
    }

    /// Removes up to `samples` (at the output rate) from the end of the FIFO: the source overlapped itself.
    public func dropNewest(samples: Int) {
        let keep = max(0, buffered - samples)
        // av_audio_fifo has no drop-from-the-end; read what stays and write it back.
        if keep == 0 {
            av_audio_fifo_reset(fifo)
        } else if let kept = try? pop(maximum: keep) {
            av_audio_fifo_reset(fifo)
            let planes = UnsafeMutableRawPointer(kept.raw.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            _ = av_audio_fifo_write(fifo, planes, Int32(kept.sampleCount))
        }
    }

    public var buffered: Int { Int(av_audio_fifo_size(fifo)) }

    /// Output samples accepted but not yet in the FIFO (swresample's delay).
    public var delayed: Int { Int(swr_get_delay(swr, Int64(encoder.context.pointee.sample_rate))) }

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
