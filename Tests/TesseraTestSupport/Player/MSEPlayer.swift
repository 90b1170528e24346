import Foundation

/// Plays fMP4 renditions in headless Chromium through Media Source Extensions (Player/mse.html, no player library):
/// the folder is served over HTTP on loopback, the page appends the segments, plays to the end and POSTs a
/// `PlaybackReport` back.
package enum MSEPlayer {
    /// One rendition: its init segment and media segments (paths relative to the served folder), in order, and the MIME
    /// type with codecs that the SourceBuffer is made for (`video/mp4; codecs="avc1.64001f"`).
    package struct Rung: Sendable {
        package var name: String
        package var mimeType: String
        package var initSegment: String
        package var segments: [String]

        package init(name: String, mimeType: String, initSegment: String, segments: [String]) {
            self.name = name
            self.mimeType = mimeType
            self.initSegment = initSegment
            self.segments = segments
        }
    }

    /// The Chromium executable: `TESSERA_CHROMIUM` when set (nil when that is not an executable), else `chromium` or
    /// `chromium-browser` on the PATH.
    package static var chromium: String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["TESSERA_CHROMIUM"], !path.isEmpty { return FileManager.default.isExecutableFile(atPath: path) ? path : nil }
        let directories = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for name in ["chromium", "chromium-browser"] {
            for directory in directories {
                let path = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
        }
        return nil
    }

    /// Whether playback tests run: Chromium is here, or this is CI (where a missing Chromium must fail, not skip).
    package static var shouldRun: Bool { chromium != nil || ProcessInfo.processInfo.environment["CI"] != nil }

    /// Appends `rung`'s init segment and every media segment (and `audio`'s, to a SourceBuffer of its own, first), then
    /// plays to the end.
    package static func play(folder: URL, rung: Rung, audio: Rung? = nil, timeout: Double = 60) throws -> PlaybackReport {
        try run(folder: folder, appends: whole(rung), audio: audio.map(whole) ?? [], timeout: timeout)
    }

    /// Switches rung at every segment boundary: segment i comes from rung i mod n, after that rung's init segment
    /// (and `changeType` when its codecs differ), then plays to the end.
    package static func playSwitching(folder: URL, rungs: [Rung], audio: Rung? = nil, timeout: Double = 60) throws -> PlaybackReport {
        try run(folder: folder, appends: try switchingSchedule(rungs), audio: audio.map(whole) ?? [], timeout: timeout)
    }

    static func whole(_ rung: Rung) -> [Append] {
        ([rung.initSegment] + rung.segments).map { Append(mimeType: rung.mimeType, path: $0) }
    }

    struct Append {
        var mimeType: String
        var path: String
    }

    /// What mse.html reads from plan.json.
    struct Plan: Encodable {
        struct Append: Encodable {
            var codecs: String
            var url: String
        }

        var stallSeconds: Double
        var appends: [Append]
        var audio: [Append]
    }

    static func switchingSchedule(_ rungs: [Rung]) throws -> [Append] {
        guard rungs.count >= 2 else { throw PlayerError(.plan, "switching needs at least two rungs, got \(rungs.count)") }
        let counts = Set(rungs.map(\.segments.count))
        guard counts.count == 1, let count = counts.first, count > 0 else {
            throw PlayerError(.plan, "rungs differ in segment count: \(rungs.map { "\($0.name) \($0.segments.count)" }.joined(separator: ", "))")
        }
        var appends: [Append] = []
        for index in 0..<count {
            let rung = rungs[index % rungs.count]
            appends.append(Append(mimeType: rung.mimeType, path: rung.initSegment))
            appends.append(Append(mimeType: rung.mimeType, path: rung.segments[index]))
        }
        return appends
    }

    /// How long the page waits for currentTime to move before it calls playback stalled.
    static let stallSeconds = 3.0
    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("mse.html")

    static func run(folder: URL, appends: [Append], audio: [Append], timeout: Double) throws -> PlaybackReport {
        guard let chromium else {
            throw PlayerError(.chromiumMissing, "chromium is not installed (apt-get install chromium, or set TESSERA_CHROMIUM to it)")
        }
        for append in appends + audio where !FileManager.default.fileExists(atPath: folder.appendingPathComponent(append.path).path) {
            throw PlayerError(.plan, "no file \(append.path) in \(folder.path)")
        }
        let url = { (path: String) in "/" + path.split(separator: "/").map(escape).joined(separator: "/") }
        let plan = Plan(stallSeconds: stallSeconds, appends: appends.map { .init(codecs: $0.mimeType, url: url($0.path)) },
                        audio: audio.map { .init(codecs: $0.mimeType, url: url($0.path)) })
        let server = try LoopbackServer(folder: folder, documents: [
            "/_player/mse.html": .init(contentType: "text/html; charset=utf-8", bytes: Array(try Data(contentsOf: page))),
            "/_player/plan.json": .init(contentType: "application/json", bytes: Array(try JSONEncoder().encode(plan))),
        ])
        defer { server.close() }

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-chromium-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("chromium.log")
        let browser = try Browser(chromium, url: server.url("/_player/mse.html"), profile: scratch.appendingPathComponent("profile"), log: log)
        let started = Date()
        let posted = server.waitForPost(to: "/_player/result", timeout: timeout) { !browser.process.isRunning }
        let wallSeconds = Date().timeIntervalSince(started)
        let exited = browser.process.isRunning ? nil : browser.process.terminationStatus
        browser.stop()

        guard let posted else {
            let tail = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(15).joined(separator: "\n")
            let why = exited.map { "chromium exited with status \($0) before reporting" } ?? "no playback report within \(Int(timeout)) s"
            throw PlayerError(.noReport, "\(why) (last requests: \(server.requests.suffix(5))); chromium log:\n\(tail)")
        }
        var report = try JSONDecoder().decode(PlaybackReport.self, from: posted)
        report.wallSeconds = wallSeconds
        return report
    }

    static func escape(_ part: Substring) -> String {
        part.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? String(part)
    }
}

/// An error of the player harness, by code.
package struct PlayerError: Error, CustomStringConvertible {
    package enum Code: Sendable { case chromiumMissing, plan, noReport, playlist }

    package let code: Code
    package let description: String

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
