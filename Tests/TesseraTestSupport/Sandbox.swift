import Foundation

/// A private directory and job store (embedded PostgreSQL in its own `--data-dir`) for one test;
/// `close()` stops the server and removes everything.
package struct Sandbox {
    package let directory: URL
    package let dataDir: String
    package let binary = Tool.tesseraBinary

    package init(_ name: String) throws {
        directory = Fixtures.directory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        dataDir = directory.appendingPathComponent("db").path
    }

    package func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// `tessera ARGS --data-dir DIR`.
    package func tessera(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run(binary, arguments + ["--data-dir", dataDir])
    }

    /// A 2 s 320x240 25 fps H.264/AAC clip of its own (tests may delete it), at `name` in the sandbox.
    package func clip(_ name: String = "in.mp4") throws -> String {
        let shared = try Fixtures.media("extras-clip.mp4", Fixtures.lavfi + ["-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
                                                                             "-c:a", "aac", "-shortest"])
        let copy = path(name)
        try FileManager.default.copyItem(atPath: shared, toPath: copy)
        return copy
    }

    package func close() {
        if FileManager.default.fileExists(atPath: dataDir) { _ = try? Tool.run(binary, ["db", "stop", "--force", "--data-dir", dataDir]) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The `KEY=VALUE` lines of an `env > FILE` dump.
    package static func environment(in file: String) throws -> [String: String] {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        var env: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            env[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return env
    }
}

/// A `tessera` process left running (stdout to a file), for commands that follow jobs.
package final class Background {
    package let process = Process()
    package let stdoutPath: String

    package init(_ binary: String, _ arguments: [String], stdout: String) throws {
        stdoutPath = stdout
        try Data().write(to: URL(fileURLWithPath: stdout))
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit { if process.isRunning { process.terminate() } }

    package var lines: [String] {
        ((try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Polls until `condition` holds on the output so far; false after `timeout` seconds.
    package func waitFor(timeout: TimeInterval, _ condition: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(lines) { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return condition(lines)
    }

    /// The exit status, or nil when it is still running after `timeout` seconds.
    package func exitStatus(within timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        return process.isRunning ? nil : process.terminationStatus
    }
}
