import FFmpegKit
import TesseraCore

/// The job's audio, made once for the whole file: AAC packets (encoded or copied) and where they start.
public struct AudioTrack: Sendable {
    public var parameters: CodecParameters
    public var timeBase: Rational
    public var packets: [MediaPacket]
    /// Source time of the first sample, in seconds on the input's clock.
    public var startSeconds: Double
    /// The source audio's length in seconds.
    public var sourceDurationSeconds: Double
    /// Seconds per AAC frame.
    public var frameSeconds: Double
    public var copied: Bool
}

public enum AudioTranscoder {
    public static func run(_ plan: JobPlan, cancellation: CancellationFlag = CancellationFlag()) throws(TesseraError) -> AudioTrack? {
        switch plan.audio {
        case .none:
            return nil
        case .copy(let index):
            return try copy(plan, streamIndex: index)
        case .encode(let index, let rate, let channels, let bitrate):
            return try encode(plan, streamIndex: index, sampleRate: rate, channels: channels, bitrate: bitrate,
                              cancellation: cancellation)
        }
    }

    static func copy(_ plan: JobPlan, streamIndex: Int) throws(TesseraError) -> AudioTrack {
        let path = plan.inputPath
        do {
            let input = try MediaInput(path: path)
            let stream = input.streams[streamIndex]
            let packet = Packet()
            var packets: [MediaPacket] = []
            while try input.read(into: packet) {
                guard packet.streamIndex == streamIndex else { continue }
                packets.append(packet.mediaPacket)
            }
            let tb = stream.timeBase
            let firstPTS = stream.startTime ?? packets.first?.pts ?? 0
            let total = packets.reduce(Int64(0)) { $0 + $1.duration }
            let duration = stream.duration.map { tb.seconds($0) } ?? tb.seconds(total)
            let frame = stream.parameters.frameSize > 0 ? Int(stream.parameters.frameSize) : 1024
            return AudioTrack(parameters: stream.parameters, timeBase: tb, packets: packets,
                              startSeconds: tb.seconds(firstPTS), sourceDurationSeconds: duration,
                              frameSeconds: Double(frame) / Double(max(1, stream.sampleRate)), copied: true)
        } catch {
            throw TesseraError(.audio, path, "audio copy failed (\(error))")
        }
    }

    static func encode(_ plan: JobPlan, streamIndex: Int, sampleRate: Int, channels: Int, bitrate: Int,
                       cancellation: CancellationFlag) throws(TesseraError) -> AudioTrack {
        let path = plan.inputPath
        do {
            let input = try MediaInput(path: path)
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
            func drainDecoder() throws {
                while try decoder.receive(decoded) == .ready {
                    defer { decoded.unref() }
                    if startTicks == nil {
                        let pts = decoded.pts ?? stream.startTime ?? 0
                        startSeconds = stream.timeBase.seconds(pts)
                        let ticks = stream.timeBase.rescale(pts, to: outBase)
                        startTicks = ticks
                        nextPTS = ticks
                    }
                    decodedSamples += decoded.sampleCount
                    try resampler.push(decoded)
                    try encodeBuffered(final: false)
                }
            }

            let source = Packet()
            while try input.read(into: source) {
                guard source.streamIndex == streamIndex else { continue }
                try cancellation.check()
                // A damaged audio packet is skipped, as players do; it does not fail the job.
                var status: CodecStatus
                do { status = try decoder.send(source) } catch { continue }
                while status == .needsInput {
                    try drainDecoder()
                    status = try decoder.send(source)
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
            return AudioTrack(parameters: try encoder.parameters, timeBase: outBase, packets: packets,
                              startSeconds: startSeconds,
                              sourceDurationSeconds: Double(decodedSamples) / Double(max(1, decoder.sampleRate)),
                              frameSeconds: Double(frameSize) / Double(sampleRate), copied: false)
        } catch let error as TesseraError {
            throw error
        } catch {
            throw TesseraError(.audio, path, "audio encode failed (\(error))")
        }
    }
}
