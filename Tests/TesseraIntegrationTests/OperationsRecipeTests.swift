import Foundation
import Testing
import TesseraTestSupport

@Suite(.serialized) struct OperationsRecipeTests {
    static func recipe() throws -> DocRecipe {
        try DocRecipe(markdown: String(contentsOf: Fixtures.repository.appendingPathComponent("docs/operations.md"), encoding: .utf8))
    }

    /// The recipe covers what an operator's first day needs, on the hosts the run builds.
    @Test func theRecipeCoversAClusterFromNothing() throws {
        let recipe = try Self.recipe()
        #expect(Set(recipe.hosts) == Set(RecipeRun.addresses.keys))
        let text = recipe.blocks.map(\.text).joined()
        for step in ["listen_addresses", "pg_hba.conf", "CREATE ROLE", "tessera keygen", "tessera migrate", "tessera submit",
                     "authorized_workers", "sed -i"] {
            #expect(text.contains(step), "the recipe has no \(step)")
        }
        let started = recipe.blocks.filter(\.runsUntilStopped)
        #expect(started.map(\.hosts) == [["coordinator"], ["worker1", "worker2"], ["worker3"]])
    }

    /// The systemd recipe of docs/operations.md, run as written on hosts with their own system directories after
    /// the cluster recipe's settings and database host: its units' command lines, as plain processes with the
    /// environment files and credentials it installs, make a coordinator that both worker units join, and after
    /// its upgrade (binary, schema, coordinator, then each worker unit, restarted) join again.
    @Test(.enabled(if: RecipeRun.overlaysAvailable, "network namespaces and overlay mounts need root, iproute2 and overlayfs: the systemd recipe is skipped"))
    func theSystemdRecipeStartsUnitsThatJoin() throws {
        let text = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let units = try DocRecipe(markdown: text, marker: "<!-- systemd recipe: ")
        #expect(units.blocks.count >= 2)
        let database = try DocRecipe(blocks: Self.recipe().blocks.filter { $0.everyHost || $0.hosts == ["db"] })
        let run = try RecipeRun()
        defer { run.tearDown() }
        run.startDirectory = Fixtures.repository
        try run.run(database)
        try run.run(units, overlaid: true)
        let logs = ["tessera-worker@1", "tessera-worker@2"].map { run.upper("worker1", "/var/log").appendingPathComponent("\($0).log") }
        let deadline = Date().addingTimeInterval(60)
        func joined(_ log: URL) -> Bool { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("joined the coordinator") }
        while Date() < deadline && !logs.allSatisfy(joined) { Thread.sleep(forTimeInterval: 0.2) }
        let coordinator = (try? String(contentsOf: run.upper("coordinator", "/var/log").appendingPathComponent("tessera-coordinator.log"),
                                       encoding: .utf8)) ?? "no log"
        for log in logs {
            #expect(joined(log), "\(log.lastPathComponent): \((try? String(contentsOf: log, encoding: .utf8)) ?? "no log")\n--- coordinator\n\(coordinator)")
        }
        // The upgrade: the coordinator stopped and started again, and both restarted worker units joined the new one.
        let coordinatorLog = run.upper("coordinator", "/var/log").appendingPathComponent("tessera-coordinator.log")
        func joinsSinceRestart() -> Int {
            let text = (try? String(contentsOf: coordinatorLog, encoding: .utf8)) ?? ""
            let starts = text.components(separatedBy: "coordinator listening")
            return starts.count < 3 ? 0 : starts.last!.components(separatedBy: "worker joined").count - 1
        }
        while Date() < deadline.addingTimeInterval(30) && joinsSinceRestart() < 2 { Thread.sleep(forTimeInterval: 0.2) }
        let after = (try? String(contentsOf: coordinatorLog, encoding: .utf8)) ?? "no log"
        #expect(after.contains("coordinator stopping") && joinsSinceRestart() >= 2, "after the upgrade:\n\(after.suffix(4000))")
    }

    /// The cluster recipe of docs/operations.md, run as written across network namespaces: PostgreSQL from
    /// Debian's fresh cluster, keys, a coordinator, two workers, a job, a third worker added, the second
    /// revoked, an upgrade's migrate and a job after it. Both outputs have every frame of the clip.
    @Test(.enabled(if: TestBed.available, "network namespaces need root and iproute2: the operations recipe is skipped"))
    func theOperationsRecipeRunsAsWritten() throws {
        let recipe = try Self.recipe()
        let run = try RecipeRun()
        defer { run.tearDown() }
        try run.run(recipe)
        let media = run.prefix("coordinator").appendingPathComponent("media")
        let files = try FileManager.default.contentsOfDirectory(atPath: media.path).filter { $0.hasSuffix(".mp4") }.sorted()
        let source = try OutputFacts.read(media.appendingPathComponent("clip.mp4").path)
        let outputs = files.filter { $0 != "clip.mp4" }
        #expect(outputs.count == 2, "outputs: \(outputs)")
        for output in outputs {
            let facts = try OutputFacts.read(media.appendingPathComponent(output).path)
            #expect(facts.countedFrames == source.countedFrames, "\(output): \(facts.countedFrames) frames of \(source.countedFrames)")
            #expect(facts.decodeErrors.isEmpty, "\(output): \(facts.decodeErrors)")
        }
        // Revoked while connected, the coordinator says so and tells the worker; a worker it had just taken for silent
        // (a loaded machine) is refused when it connects again, and says so in its own words.
        let worker2 = run.bed.log("worker2.log")
        let revoked = run.bed.log("coordinator.log").contains("worker's key revoked")
            || worker2.contains("is not among the coordinator's authorized keys")
            || worker2.contains("it is not in the coordinator's authorized keys")
        #expect(revoked, "worker2 was not revoked:\n\(run.serviceLogs())")
        #expect(run.bed.log("worker3.log").contains("joined the coordinator"), "worker3 never joined:\n\(run.serviceLogs())")
    }
}
