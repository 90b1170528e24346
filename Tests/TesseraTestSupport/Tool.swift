import Foundation
import TesseraCore

/// Runs external programs (ffmpeg, ffprobe, the tessera binary) with output captured through files.
package enum Tool {
    package struct Output {
        package var status: Int32
        package var stdout: Data
        package var stderr: String
        package var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    package static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        let dir = FileManager.default.temporaryDirectory
        let out = dir.appendingPathComponent("tessera-test-\(UUID().uuidString).out")
        let err = dir.appendingPathComponent("tessera-test-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = Process()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: (try? Data(contentsOf: out)) ?? Data(),
                      stderr: String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))
    }

    /// Runs ffmpeg quietly and fails the caller when it fails.
    package static func ffmpeg(_ arguments: [String]) throws {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
        guard result.status == 0 else { throw ToolError("ffmpeg \(arguments.joined(separator: " ")): \(result.stderr)") }
    }

    /// ffmpeg's psnr summary for the filter graph `lavfi` over inputs [0] `a` and [1] `b`: the average
    /// and the worst frame's PSNR (infinity when identical).
    package static func psnr(_ a: String, _ b: String, lavfi: String) throws -> (average: Double, minimum: Double) {
        let result = try run("ffmpeg", ["-nostdin", "-hide_banner", "-i", a, "-i", b, "-lavfi", lavfi, "-f", "null", "-"])
        guard result.status == 0,
              let line = result.stderr.split(whereSeparator: \.isNewline).last(where: { $0.contains("PSNR ") && $0.contains("average:") }) else {
            throw ToolError("psnr: \(result.stderr.suffix(400))")
        }
        func value(_ key: String) throws -> Double {
            guard let range = line.range(of: key) else { throw ToolError("psnr: no \(key) in \(line)") }
            let text = line[range.upperBound...].prefix { !$0.isWhitespace }
            if text == "inf" { return .infinity }
            guard let number = Double(text) else { throw ToolError("psnr: \(line)") }
            return number
        }
        return (try value("average:"), try value("min:"))
    }

    package static func ffprobe(_ arguments: [String]) throws -> String {
        let result = try run("ffprobe", ["-v", "error"] + arguments)
        guard result.status == 0 else { throw ToolError("ffprobe \(arguments.joined(separator: " ")): \(result.stderr)") }
        return result.text
    }

    /// The bytes of the video stream's packets.
    package static func videoBytes(_ path: String) throws -> Int {
        let sizes = try Tool.ffprobe(["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size", "-of", "csv=p=0", path])
        return sizes.split(whereSeparator: \.isNewline).compactMap { Int($0) }.reduce(0, +)
    }

    /// Per-frame MSE (all planes) of `path` against `reference`, from ffmpeg's psnr filter.
    package static func perFrameMSE(_ path: String, _ reference: String) throws -> [Double] {
        let result = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-i", reference,
                                             "-lavfi", "[0:v][1:v]psnr=stats_file=-", "-f", "null", "-"])
        guard result.status == 0 else { throw ToolError("psnr: \(result.stderr.suffix(400))") }
        return result.text.split(whereSeparator: \.isNewline).compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("mse_avg:") }.flatMap { Double($0.dropFirst(8)) }
        }
    }

    /// The `tessera` executable built beside the test bundle.
    package static var tesseraBinary: String {
        if let path = ProcessInfo.processInfo.environment["TESSERA_BINARY"] { return path }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("tessera")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                return candidate.path
            }
            dir.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/tessera").path
    }
}

package struct ToolError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Test media made with ffmpeg's lavfi sources, once per test run, shared by the tests.
package enum Fixtures {
    /// The repository's root, where the deployment files are.
    package static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Removed when the test process exits (registered first, so after the suites' own exit handlers).
    package static let directory: URL = {
        TestLogging.configured
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-fixtures-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        atexit {
            guard ProcessInfo.processInfo.environment["TESSERA_KEEP_CLUSTERS"] == nil else { return }
            try? FileManager.default.removeItem(at: FileManager.default.temporaryDirectory
                .appendingPathComponent("tessera-fixtures-\(ProcessInfo.processInfo.processIdentifier)"))
        }
        return dir
    }()

    private static let made = Locked<[String: String]>([:])

    /// A 320x240 25 fps test pattern with a 440 Hz tone.
    package static let lavfi = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]

    /// The file `name`, made by ffmpeg with `arguments` (inputs and codec options) the first time it is asked for.
    package static func media(_ name: String, _ arguments: [String]) throws -> String {
        try made.withValue { cache in
            if let path = cache[name] { return path }
            let path = directory.appendingPathComponent(name).path
            try Tool.ffmpeg(arguments + [path])
            cache[name] = path
            return path
        }
    }

    /// A fresh output path in the fixtures directory.
    package static func output(_ name: String) -> String {
        directory.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)").path
    }
}
