import Foundation
import TesseraCore

/// A small ladder with hand-picked numbers: two rungs at 30000/1001 fps cut at 6.006, 12.012 and 14.5145 s (in
/// timescales 30000 and 90000), and AAC at 48 kHz.
enum SmallLadder {
    /// An avcC record around a minimal SPS whose first bytes are `profile`, `constraints`, `level`.
    static func avcC(profile: UInt8, constraints: UInt8, level: UInt8) -> [UInt8] {
        let sps: [UInt8] = [0x67, profile, constraints, level, 0xAC, 0xD9, 0x40]
        return [1, profile, constraints, level, 0xFF, 0xE1, 0, UInt8(sps.count)] + sps + [1, 0, 4, 0x68, 0xEB, 0xE3, 0xCB]
    }

    static func segments(_ durations: [Int64], _ bytes: [Int64], iFrames: [Int64]? = nil) -> [MediaSegment] {
        durations.indices.map { i in
            MediaSegment(duration: durations[i], byteSize: bytes[i], iFrame: iFrames.map { ByteRange(offset: 0, length: $0[i]) })
        }
    }

    static let high720 = VideoRendition(
        name: "720p", width: 1280, height: 720, frameRate: Rational(30000, 1001),
        decoderConfiguration: avcC(profile: 0x64, constraints: 0x00, level: 0x1F),
        track: MediaTrack(timescale: 30000, segments: segments([180180, 180180, 75075], [750750, 900900, 500500], iFrames: [60060, 75075, 50050])))

    static let main360 = VideoRendition(
        name: "360p", width: 640, height: 360, frameRate: Rational(30000, 1001),
        decoderConfiguration: avcC(profile: 0x4D, constraints: 0x40, level: 0x1E),
        track: MediaTrack(timescale: 90000, segments: segments([540540, 540540, 225225], [300300, 375375, 200200], iFrames: [30030, 37537, 20020])))

    static let english = AudioRendition(
        name: "English", language: "en", format: AudioFormat(objectType: 2, channels: 2, sampleRate: 48000),
        track: MediaTrack(timescale: 48000, segments: segments([288768, 287744, 121856], [96256, 96000, 41000])))

    static let presentation = PackagedPresentation(video: [high720, main360], audio: english)
}

/// Runs a program (ffmpeg, ffprobe) with its output captured through files.
enum CommandLineTool {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = FileManager.default.temporaryDirectory
        let out = directory.appendingPathComponent("tessera-core-\(UUID().uuidString).out")
        let err = directory.appendingPathComponent("tessera-core-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }

    static func ffmpeg(_ arguments: [String]) throws {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
        guard result.status == 0 else { throw Failure(description: "ffmpeg \(arguments.joined(separator: " ")): \(result.stderr)") }
    }

    static func ffprobe(_ arguments: [String]) throws -> String {
        let result = try run("ffprobe", ["-v", "error"] + arguments)
        guard result.status == 0 else { throw Failure(description: "ffprobe \(arguments.joined(separator: " ")): \(result.stderr)") }
        return result.stdout
    }

    /// The first audio stream's extradata (for AAC, the AudioSpecificConfig), from ffprobe's hex dump.
    static func audioExtradata(_ path: String) throws -> [UInt8] {
        let dump = try ffprobe(["-select_streams", "a:0", "-show_entries", "stream=extradata", "-show_data", "-of", "default", path])
        // "00000000: 1190 56e5 00   ..V..": the hex groups between the offset and the text column.
        var bytes: [UInt8] = []
        for line in dump.split(separator: "\n") where line.count > 10 && line.dropFirst(8).hasPrefix(": ") {
            let hex = line.dropFirst(10).prefix(40).split(separator: " ").joined()
            var index = hex.startIndex
            while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), let byte = UInt8(hex[index..<next], radix: 16) {
                bytes.append(byte)
                index = next
            }
        }
        guard !bytes.isEmpty else { throw Failure(description: "no extradata in \(path)") }
        return bytes
    }

    /// A fresh directory under the temporary one.
    static func scratchDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// The payload of the first `type` box found anywhere in an MP4 file's bytes (a plain scan for the four letters
/// preceded by a plausible size, enough for small files made by ffmpeg).
func mp4BoxPayload(_ type: String, in bytes: [UInt8]) -> [UInt8]? {
    let tag = Array(type.utf8)
    guard bytes.count >= 8 else { return nil }
    for start in 4..<(bytes.count - 4) where Array(bytes[start..<(start + 4)]) == tag {
        let size = bytes[(start - 4)..<start].reduce(0) { $0 << 8 | Int($1) }
        guard size >= 8, start - 4 + size <= bytes.count else { continue }
        return Array(bytes[(start + 4)..<(start - 4 + size)])
    }
    return nil
}
