import Foundation

/// Headless Chromium showing one page, with a profile of its own, muted, autoplay allowed and no GPU; stopped (with
/// its renderer and helper processes) by `stop()`.
final class Browser {
    let process = Process()

    init(_ executable: String, url: String, profile: URL, log: URL) throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        var arguments = [
            "--headless=new", "--disable-gpu", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
            "--user-data-dir=\(profile.path)", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
            // Playback in a page nobody looks at must not be throttled or paused.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
            "--enable-logging=stderr", "--v=0",
        ]
        // Chromium's sandbox refuses to start as root.
        if geteuid() == 0 { arguments.append("--no-sandbox") }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments + [url]
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// SIGTERM to the browser's process group (or to the browser alone when it shares ours), SIGKILL after 5 s.
    func stop() {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        let target = getpgid(pid) == pid ? -pid : pid
        kill(target, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill(target, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
