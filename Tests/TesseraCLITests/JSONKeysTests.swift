import Foundation
import Testing
import TesseraCore
import TesseraTestSupport

/// The keys of a `--json` output as docs/cli.md lists them: the backquoted names in the first column of the table
/// under a heading. A dotted name (`spec.settings.crf`) is a key of the object named before its last dot.
struct DocumentedKeys {
    let keys: Set<String>

    /// The table under the first heading that starts with `heading` (`### events`, `#### \`cancel --json\``).
    init(_ heading: String) throws {
        let text = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix(heading) }, "docs/cli.md has no heading \(heading)")
        var keys: Set<String> = [], inTable = false
        for line in lines[(start + 1)...] {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("| ") else { if inTable { break } else { continue } }
            inTable = true
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            keys.formUnion(cell.matches(of: /`([A-Za-z.]+)`/).map { String($0.output.1) })
        }
        keys.remove("key")
        #expect(!keys.isEmpty, "a table under \(heading)")
        self.keys = keys
    }

    init(keys: Set<String>) { self.keys = keys }

    static func + (a: DocumentedKeys, b: DocumentedKeys) -> DocumentedKeys { DocumentedKeys(keys: a.keys.union(b.keys)) }

    /// The key paths of `object`: its keys, and the keys of the objects in it that the docs list keys of.
    func paths(of object: [String: Any], under prefix: String = "") -> Set<String> {
        var found: Set<String> = []
        for (key, value) in object {
            let path = prefix + key
            found.insert(path)
            if let inner = value as? [String: Any], keys.contains(where: { $0.hasPrefix(path + ".") }) {
                found.formUnion(paths(of: inner, under: path + "."))
            }
        }
        return found
    }

    /// Every key `object` has is documented, and every documented key is there whenever its object is (`null` when unset).
    func check(_ object: [String: Any], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let emitted = paths(of: object)
        let undocumented = emitted.subtracting(keys)
        #expect(undocumented.isEmpty, "\(what): keys not in docs/cli.md: \(undocumented.sorted())", sourceLocation: sourceLocation)
        let missing = keys.filter { key in
            guard let dot = key.lastIndex(of: ".") else { return !emitted.contains(key) }
            let parent = String(key[..<dot])
            return emitted.contains(parent) && value(at: parent, in: object) is [String: Any] && !emitted.contains(key)
        }
        #expect(missing.isEmpty, "\(what): documented keys it lacks: \(missing.sorted())", sourceLocation: sourceLocation)
    }

    private func value(at path: String, in object: [String: Any]) -> Any? {
        path.split(separator: ".").reduce(object as Any?) { ($0 as? [String: Any])?[String($1)] }
    }
}

/// Every job command's `--json`, against a real store: each key it prints is documented, and each documented key
/// is printed, `null` when unset.
@Suite(.serialized) struct JSONKeysTests {
    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
    }

    @Test func everyJobCommandsJSONKeyIsDocumentedAndPresent() throws {
        let box = try Sandbox("json-keys")
        defer { box.close() }
        let jobKeys = try DocumentedKeys("### Job objects")
        let submitKeys = try jobKeys + DocumentedKeys("#### `submit --json`")
        let input = try box.clip()

        // Nothing optional given: every optional key is there as null.
        let plain = try box.tessera(["submit", input, "-o", box.path("plain.mp4"), "--coordinator", "nobody", "--json"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.text.split(separator: "\n").count == 1, "one line")
        let submitted = try Self.object(plain.stdout)
        submitKeys.check(submitted, "submit --json")
        let spec = try #require(submitted["spec"] as? [String: Any])
        #expect(spec["segmentSeconds"] is NSNull && spec["ladder"] is NSNull && spec["outputMode"] is NSNull)
        #expect((spec["settings"] as? [String: Any])?["bitrate"] is NSNull)
        #expect((spec["picture"] as? [String: Any])?["size"] is NSNull)
        #expect(submitted["ladderSummary"] is NSNull)
        #expect(submitted["places"] as? [String] == [box.path("plain.mp4")])
        let id = try #require(submitted["id"] as? String)

        // A ladder with every key set: the ladder's own keys come in, with what submitting it planned.
        try FileManager.default.createDirectory(atPath: box.path("hls"), withIntermediateDirectories: true)
        let ladder = try Self.object(box.tessera(["submit", input, "-o", box.path("hls/master.m3u8"), "--ladder", "240,120", "--hls-time", "2",
                                                  "--segment-seconds", "2", "--output-mode", "0644", "--coordinator", "nobody", "--json"]).stdout)
        submitKeys.check(ladder, "submit --json with a ladder")
        let ladderSpec = try #require(ladder["spec"] as? [String: Any])
        #expect(ladderSpec["segmentSeconds"] as? Double == 2 && ladderSpec["outputMode"] as? String == "0644")
        #expect(ladder["ladderSummary"] as? String == "rungs 240p, 120p; HLS, 2 s segments")
        #expect(ladder["places"] as? [String] == [box.path("hls")])

        jobKeys.check(try Self.object(box.tessera(["status", id, "--json"]).stdout), "status --json")

        // watch --json: a job object a line while the job lives, the last one when it ended.
        let watching = try Background(box.binary, ["watch", id, "--json", "--data-dir", box.dataDir], stdout: box.path("watch.out"))
        #expect(watching.waitFor(timeout: 20) { !$0.isEmpty }, "a first line")
        let cancel = try box.tessera(["cancel", id, "--json"])
        #expect(cancel.status == 0, "\(cancel.stderr)")
        let canceled = try Self.object(cancel.stdout)
        try DocumentedKeys("#### `cancel --json`").check(canceled, "cancel --json")
        #expect(canceled["canceled"] as? [String] == [id] && (canceled["alreadyEnded"] as? [String])?.isEmpty == true)
        #expect(watching.exitStatus(within: 20) == 1, "canceled")
        let lines = try watching.lines.map { try Self.object(Data($0.utf8)) }
        #expect(lines.first?["state"] as? String == "queued" && lines.last?["state"] as? String == "canceled", "\(watching.lines)")
        for line in lines { jobKeys.check(line, "watch --json") }

        let again = try Self.object(box.tessera(["cancel", id, "--json"]).stdout)
        #expect((again["canceled"] as? [String])?.isEmpty == true && again["alreadyEnded"] as? [String] == [id])
        let all = try Self.object(box.tessera(["cancel", "--all", "--json"]).stdout)
        #expect((all["canceled"] as? [String])?.count == 1, "the ladder job")

        let eventKeys = try DocumentedKeys("### events")
        let events = try box.tessera(["events", "--json", "--no-follow"]).text.split(separator: "\n")
        #expect(events.count >= 4)
        for event in events { eventKeys.check(try Self.object(Data(event.utf8)), "events --json") }

        Thread.sleep(forTimeInterval: 1.1)
        let prune = try box.tessera(["prune", "--older-than", "1s", "--json"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let pruned = try Self.object(prune.stdout)
        try DocumentedKeys("#### `prune --json`").check(pruned, "prune --json")
        #expect((pruned["removed"] as? [String])?.count == 2 && pruned["olderThanSeconds"] as? Double == 1)
    }

    /// The keys the test reads the docs for are the ones the parser finds: a table it misreads cannot pass.
    @Test func theDocumentedKeyListsAreRead() throws {
        let job = try DocumentedKeys("### Job objects")
        #expect(job.keys.isSuperset(of: ["id", "priority", "spec.picture", "spec.segmentSeconds", "spec.settings.crf", "spec.ladder.packaging"]))
        #expect(try DocumentedKeys("### `transcode --json`").keys.isSuperset(of: ["setup.forkedWorkers", "peakRSSBytes.worker", "timings"]))
        // The spec's JSON is written key by key: each stored property of its parts is a documented key.
        for (name, value) in [("settings", EncoderSettings() as Any), ("audio", AudioSettings()), ("picture", PictureSettings()),
                              ("ladder", LadderSpec(ladder: try Ladder(parsing: "720"), packaging: .hls))] {
            let properties = Set(Mirror(reflecting: value).children.compactMap { $0.label.map { "spec.\(name).\($0)" } })
            #expect(properties == job.keys.filter { $0.hasPrefix("spec.\(name).") }, "\(name)")
        }
        #expect(Set(Mirror(reflecting: JobSpec()).children.compactMap { $0.label.map { "spec.\($0)" } })
                == job.keys.filter { $0.hasPrefix("spec.") && $0.split(separator: ".").count == 2 })
        let flat = job.paths(of: ["spec": ["settings": ["crf": 1]], "error": NSNull()])
        #expect(flat == ["spec", "spec.settings", "spec.settings.crf", "error"])
    }
}
