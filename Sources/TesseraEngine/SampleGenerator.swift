import FFmpegKit
import Foundation
import TesseraCore

/// Makes a sample clip (moving pattern, 440 Hz tone) so that `tessera transcode` runs with no input.
public enum SampleGenerator {
    public static func generate(to path: String, seconds: Int, width: Int, height: Int, fps: Int32 = 30) throws(TesseraError) {
        do {
            let format = VideoOutputFormat(width: Int32(width), height: Int32(height), pixelFormat: "yuv420p",
                                           timeBase: Rational(1, fps), frameRate: Rational(fps, 1),
                                           sampleAspectRatio: Rational(1, 1), colorRange: 1, colorPrimaries: 1,
                                           colorTransfer: 1, colorSpace: 1, chromaLocation: 1)
            var config = VideoEncoderConfig(codecName: "libx264", format: format, gopSize: fps * 2, maxBFrames: 2)
            config.options = [("preset", "veryfast"), ("crf", "18")]
            config.threads = 0
            let video = try Encoder(video: config)
            let audio = try Encoder(audio: AudioEncoderConfig(codecName: "aac", sampleRate: 48000, channels: 2, bitRate: 128_000))
            let output = try MediaOutput(path: path)
            let videoStream = try output.addStream(from: video)
            let audioStream = try output.addStream(from: audio)
            try output.writeHeader(options: [("movflags", "+faststart")])
            let packet = Packet()
            func drain(_ encoder: Encoder, _ stream: Int) throws {
                while try encoder.receive(packet) == .ready {
                    try output.write(packet, stream: stream, timeBase: encoder.timeBase)
                }
            }
            let frame = try Frame.video(width: width, height: height, pixelFormat: "yuv420p")
            let samplesPerFrame = audio.frameSize > 0 ? audio.frameSize : 1024
            var samplesWritten = 0
            let totalFrames = seconds * Int(fps)
            for n in 0..<totalFrames {
                try frame.makeWritable()
                paint(frame, n: n, width: width, height: height)
                frame.pts = Int64(n)
                _ = try video.send(frame)
                try drain(video, videoStream)
                // Keep the audio up to the video's time.
                while samplesWritten < (n + 1) * 48000 / Int(fps) {
                    let chunk = try audio.makeAudioFrame(samples: samplesPerFrame)
                    for channel in 0..<2 {
                        chunk.withPlane(channel) { plane, _ in
                            plane.withMemoryRebound(to: Float.self, capacity: samplesPerFrame) { samples in
                                for i in 0..<samplesPerFrame {
                                    samples[i] = 0.3 * Float(sin(2 * Double.pi * 440 * Double(samplesWritten + i) / 48000))
                                }
                            }
                        }
                    }
                    chunk.pts = Int64(samplesWritten)
                    samplesWritten += samplesPerFrame
                    _ = try audio.send(chunk)
                    try drain(audio, audioStream)
                }
            }
            _ = try video.send(nil)
            try drain(video, videoStream)
            _ = try audio.send(nil)
            try drain(audio, audioStream)
            try output.finish()
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw .output(path, "cannot generate the sample clip (\(error))")
        }
    }

    /// A diagonal gradient that drifts, a bright square that moves, and slowly turning colours.
    static func paint(_ frame: Frame, n: Int, width: Int, height: Int) {
        frame.withPlane(0) { y, stride in
            let boxX = (n * 7) % max(1, width - 64), boxY = (n * 3) % max(1, height - 64)
            for row in 0..<height {
                let line = y + row * stride
                for col in 0..<width {
                    let inBox = col >= boxX && col < boxX + 64 && row >= boxY && row < boxY + 64
                    line[col] = inBox ? 235 : UInt8(truncatingIfNeeded: 16 + ((col + row + n * 4) & 0x7F))
                }
            }
        }
        for plane in 1...2 {
            frame.withPlane(plane) { c, stride in
                for row in 0..<(height / 2) {
                    let line = c + row * stride
                    for col in 0..<(width / 2) {
                        line[col] = UInt8(truncatingIfNeeded: 128 + Int(40 * sin(Double(col + n * (plane == 1 ? 2 : 3)) / 40)))
                    }
                }
            }
        }
    }
}
