import Foundation
import Testing
import TesseraTestSupport

/// docker-compose.yml run as its header says, on a machine without a container engine: `Tests/StandIns/docker`
/// plays `docker compose`, running each service's command line as the file writes it in namespaces of its own
/// (network, mount, host name) with its volumes, user and environment (see that file for what stands in for the
/// images). The commands are the file's own, with two workers for eight.
@Suite(.serialized) struct ComposeRecipeTests {
    static let hosts = ["postgres": 1, "coordinator": 2, "worker_1": 11, "worker_2": 12]

    @Test(.enabled(if: RecipeRun.overlaysAvailable, "namespaces and overlay mounts need root, iproute2 and overlayfs: the compose recipe is skipped"))
    func theComposeFileRunsAsItsHeaderSays() throws {
        let root = Fixtures.directory.appendingPathComponent("compose-\(UUID().uuidString.prefix(6))")
        let project = root.appendingPathComponent("tessera")
        try FileManager.default.createDirectory(at: project.appendingPathComponent("media"), withIntermediateDirectories: true)
        let bed = try TestBed(directory: root)
        var table: [String: [String: String]] = [:]
        for (name, number) in Self.hosts.sorted(by: { $0.value < $1.value }) {
            let host = try bed.addHost(name, number: number)
            table[name] = ["namespace": host.namespace, "address": host.address]
        }
        let state = root.appendingPathComponent("engine")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        let hostsFile = root.appendingPathComponent("hosts.json")
        try JSONSerialization.data(withJSONObject: table).write(to: hostsFile)
        let environment = [
            "PATH": Fixtures.repository.appendingPathComponent("Tests/StandIns").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "COMPOSE_STANDIN_STATE": state.path, "COMPOSE_STANDIN_HOSTS": hostsFile.path, "COMPOSE_STANDIN_TESSERA": Tool.tesseraBinary,
            "HOME": root.path,
        ]
        func shell(_ line: String) throws -> Tool.Output {
            try Tool.run("bash", ["-c", "cd '\(project.path)' && \(line)"], environment: environment)
        }
        func logs() -> String {
            let dir = state.appendingPathComponent("logs")
            let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()) ?? []
            return files.map { "--- \($0)\n" + ((try? String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)) ?? "").suffix(1500) }
                .joined(separator: "\n")
        }
        defer {
            _ = try? shell("docker compose down")
            bed.tearDown()
            try? FileManager.default.removeItem(at: root)
        }
        for file in ["docker-compose.yml", ".env.example"] {
            try FileManager.default.copyItem(at: Fixtures.repository.appendingPathComponent(file), to: project.appendingPathComponent(file))
        }
        // The secrets step as .env.example gives it, then the header's commands.
        let example = try String(contentsOf: project.appendingPathComponent(".env.example"), encoding: .utf8)
        let secrets = try #require(Self.commands(example, starting: "cp .env.example .env").first)
        let made = try shell(secrets)
        #expect(made.status == 0, "\(secrets): \(made.stderr)")
        let password = try String(contentsOf: project.appendingPathComponent(".env"), encoding: .utf8)
        let generated = try Regex(#"POSTGRES_PASSWORD=[0-9a-f]{48}"#)
        #expect(password.contains(generated), "\(password)")
        let compose = try String(contentsOf: project.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let header = Self.commands(compose, starting: "docker compose")
        #expect(header.count == 2, "\(header)")
        let up = try #require(header.first { $0.contains(" up ") }).replacingOccurrences(of: "worker=8", with: "worker=2")
        let submit = try #require(header.first { $0.contains(" exec ") })

        let clip = project.appendingPathComponent("media/in.mov")
        let encoded = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-f", "lavfi",
                                              "-i", "sine=frequency=440:duration=4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25",
                                              "-c:a", "aac", "-shortest", clip.path])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let started = try shell(up)
        try #require(started.status == 0, "\(up): \(started.stderr)\n\(logs())")
        let ran = try shell(submit)
        try #require(ran.status == 0, "\(submit): \(ran.stderr)\n\(logs())")
        let source = try OutputFacts.read(clip.path)
        let output = try OutputFacts.read(project.appendingPathComponent("media/out.mp4").path)
        #expect(output.countedFrames == source.countedFrames)
        #expect(output.decodeErrors.isEmpty, "\(output.decodeErrors)")
        for worker in ["worker_1", "worker_2"] {
            let log = (try? String(contentsOf: state.appendingPathComponent("logs/\(worker).log"), encoding: .utf8)) ?? ""
            #expect(log.contains("joined the coordinator"), "\(worker): \(log.suffix(1500))")
        }

        // Down and up again: the keys, the database and the media are kept; a second job runs.
        let key = try String(contentsOf: state.appendingPathComponent("volumes/coordinator-keys/coordinator.pub"), encoding: .utf8)
        #expect(try shell("docker compose down").status == 0)
        let again = try shell(up)
        try #require(again.status == 0, "\(up), again: \(again.stderr)\n\(logs())")
        #expect(try String(contentsOf: state.appendingPathComponent("volumes/coordinator-keys/coordinator.pub"), encoding: .utf8) == key)
        let second = try shell(submit.replacingOccurrences(of: "out.mp4", with: "again.mp4"))
        try #require(second.status == 0, "second job: \(second.stderr)\n\(logs())")
        #expect(try OutputFacts.read(project.appendingPathComponent("media/again.mp4").path).countedFrames == source.countedFrames)
    }

    /// The command lines a file's comments give (`#   COMMAND …`) that start with `prefix`, comments after them cut.
    static func commands(_ text: String, starting prefix: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            let body = line.drop { $0 == "#" || $0 == " " }
            guard line.hasPrefix("#"), body.hasPrefix(prefix) else { return nil }
            return String(body.split(separator: "#", maxSplits: 1).first ?? body).trimmingCharacters(in: .whitespaces)
        }
    }
}
