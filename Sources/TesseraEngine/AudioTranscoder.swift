import FFmpegKit
import TesseraCore

/// The job's audio, made once for the whole file: AAC packets (encoded or copied) and where they start.
public struct AudioTrack: Sendable {
    public var parameters: CodecParameters
    public var timeBase: Rational
    public var packets: [MediaPacket]
    /// Source time of the first sample, in seconds on the input's clock.
    public var startSeconds: Double
    /// The same instant in `timeBase` ticks.
    public var startTicks: Int64
    /// The source audio's length in seconds.
    public var sourceDurationSeconds: Double
    /// Seconds per AAC frame.
    public var frameSeconds: Double
    public var copied: Bool
    /// Gaps filled with silence and overlaps trimmed to keep the source's timeline.
    public var timelineRepairs: Int = 0
}

public enum AudioTranscoder {
    public static func run(_ plan: JobPlan, halted: @Sendable () -> Bool = { false }) throws(TesseraError) -> AudioTrack? {
        switch plan.audio {
        case .none:
            return nil
        case .copy(let index, let strict):
            if let track = try copy(plan, streamIndex: index, strict: strict) { return track }
            // The source's AAC has holes in its timeline: encode it, filling them with silence.
            let stream = plan.probe.audio!
            return try encode(plan, streamIndex: index, sampleRate: stream.sampleRate, channels: stream.channels,
                              bitrate: 64_000 * min(stream.channels, 6), halted: halted)
        case .encode(let index, let rate, let channels, let bitrate):
            return try encode(plan, streamIndex: index, sampleRate: rate, channels: channels, bitrate: bitrate, halted: halted)
        }
    }

    /// The stream's packets as they are; nil when they do not form one continuous timeline and the
    /// copy was not demanded (`strict`).
    static func copy(_ plan: JobPlan, streamIndex: Int, strict: Bool) throws(TesseraError) -> AudioTrack? {
        let path = plan.inputPath
        do {
            let input = try plan.reopenInput()
            input.readOnly(stream: streamIndex)
            let stream = input.streams[streamIndex]
            let packet = Packet()
            var packets: [MediaPacket] = []
            while try input.read(into: packet) {
                guard packet.streamIndex == streamIndex else { continue }
                packets.append(packet.mediaPacket)
            }
            let tb = stream.timeBase
            let firstPTS = stream.startTime ?? packets.first?.pts ?? 0
            // Continuous when each packet starts where the one before ended (within 50 ms).
            let tolerance = Int64(0.05 / tb.doubleValue)
            var continuous = true
            var end = packets.first?.pts ?? 0
            for p in packets {
                guard let pts = p.pts else { continue }
                if abs(pts - end) > tolerance { continuous = false }
                end = pts + p.duration
            }
            if !continuous && !strict { return nil }
            let duration = tb.seconds(end - (packets.first?.pts ?? 0) - max(0, firstPTS - (packets.first?.pts ?? 0)))
            let frame = stream.parameters.frameSize > 0 ? Int(stream.parameters.frameSize) : 1024
            return AudioTrack(parameters: stream.parameters, timeBase: tb, packets: packets,
                              startSeconds: tb.seconds(firstPTS), startTicks: firstPTS, sourceDurationSeconds: duration,
                              frameSeconds: Double(frame) / Double(max(1, stream.sampleRate)), copied: true)
        } catch let error as TesseraError where error.kind == .input {
            throw error
        } catch {
            throw TesseraError(.audio, path, "audio copy failed (\(error))")
        }
    }

    static func encode(_ plan: JobPlan, streamIndex: Int, sampleRate: Int, channels: Int, bitrate: Int,
                       halted: @Sendable () -> Bool) throws(TesseraError) -> AudioTrack {
        let path = plan.inputPath
        do {
            let input = try plan.reopenInput()
            input.readOnly(stream: streamIndex)  // the video's bytes are not read (an object: not fetched)
            let stream = input.streams[streamIndex]
            let decoder = try Decoder(input: input, streamIndex: streamIndex)
            let encoder = try Encoder(audio: AudioEncoderConfig(codecName: "aac", sampleRate: Int32(sampleRate),
                                                                channels: Int32(channels), bitRate: Int64(bitrate)))
            let resampler = try Resampler(decoder: decoder, encoder: encoder)
            let frameSize = encoder.frameSize > 0 ? encoder.frameSize : 1024
            let outBase = Rational(1, Int32(sampleRate))
            let packet = Packet()
            let decoded = Frame()
            var packets: [MediaPacket] = []
            var startTicks: Int64?
            var startSeconds = 0.0
            var decodedSamples = 0
            var nextPTS: Int64 = 0
            var gaps = 0

            func drainEncoder() throws {
                while try encoder.receive(packet) == .ready {
                    packets.append(packet.mediaPacket)
                    packet.unref()
                }
            }
            func encodeBuffered(final: Bool) throws {
                while resampler.buffered >= frameSize || (final && resampler.buffered > 0) {
                    guard let frame = try resampler.pop(maximum: frameSize) else { break }
                    frame.pts = nextPTS
                    nextPTS += Int64(frame.sampleCount)
                    while try encoder.send(frame) == .needsInput { try drainEncoder() }
                    try drainEncoder()
                }
            }
            // Follow the source's timeline, not just its sample count: a gap in the timestamps becomes
            // silence, an overlap is trimmed, so everything after stays in sync with the video.
            let tolerance = Int64(Double(sampleRate) * 0.05)
            var timelineEnd = 0.0
            func drainDecoder() throws {
                while try decoder.receive(decoded) == .ready {
                    defer { decoded.unref() }
                    let pts = decoded.pts
                    if startTicks == nil {
                        let first = pts ?? stream.startTime ?? 0
                        startSeconds = stream.timeBase.seconds(first)
                        let ticks = stream.timeBase.rescale(first, to: outBase)
                        startTicks = ticks
                        nextPTS = ticks
                    } else if let pts {
                        let expected = nextPTS + Int64(resampler.buffered + resampler.delayed)
                        let drift = stream.timeBase.rescale(pts, to: outBase) - expected
                        if drift > tolerance {
                            try resampler.drain()
                            try resampler.pushSilence(samples: Int(drift))
                            gaps += 1
                        } else if drift < -tolerance {
                            try resampler.drain()
                            resampler.dropNewest(samples: Int(-drift))
                            gaps += 1
                        }
                    }
                    // A frame without a pts (a decoder's last, flushed one: WMA's) follows the one before it.
                    let length = Double(decoded.sampleCount) / Double(max(1, decoded.sampleRate))
                    if let pts {
                        timelineEnd = max(timelineEnd, stream.timeBase.seconds(pts) + length)
                    } else if timelineEnd > 0 {
                        timelineEnd += length
                    }
                    decodedSamples += decoded.sampleCount
                    try resampler.push(decoded)
                    try encodeBuffered(final: false)
                }
            }

            let source = Packet()
            while try input.read(into: source) {
                guard source.streamIndex == streamIndex else { continue }
                if halted() { throw TesseraError.canceled }
                // A damaged audio packet is skipped, as players do; the timeline keeps the rest in place.
                var sent = false
                while !sent {
                    let status: CodecStatus
                    do { status = try decoder.send(source) } catch { break }
                    if status == .needsInput { try drainDecoder() } else { sent = true }
                }
                try drainDecoder()
            }
            _ = try decoder.send(nil)
            try drainDecoder()
            try resampler.push(nil)
            try encodeBuffered(final: true)
            _ = try encoder.send(nil)
            try drainEncoder()
            guard decodedSamples > 0 else { throw FFmpegError("no audio samples decoded", call: "decode") }
            // The length of the source's audio timeline (what the output must match), not the sample count.
            let duration = timelineEnd > startSeconds ? timelineEnd - startSeconds : Double(decodedSamples) / Double(max(1, decoder.sampleRate))
            return AudioTrack(parameters: try encoder.parameters, timeBase: outBase, packets: packets,
                              startSeconds: startSeconds, startTicks: startTicks ?? 0, sourceDurationSeconds: duration,
                              frameSeconds: Double(frameSize) / Double(sampleRate), copied: false, timelineRepairs: gaps)
        } catch let error as TesseraError {
            throw error
        } catch {
            throw TesseraError(.audio, path, "audio encode failed (\(error))")
        }
    }
}
