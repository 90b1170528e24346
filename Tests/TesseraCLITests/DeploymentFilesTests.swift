import Foundation
import Testing
import TesseraTestSupport

/// The commands in docker-compose.yml, deploy/systemd, deploy/kubernetes, the README and the docs are the
/// real CLI: every option they pass exists in that subcommand's help.
@Suite struct DeploymentFilesTests {
    @Test func everyOptionInTheDeploymentFilesExists() throws {
        let files = ["docker-compose.yml", "deploy/kubernetes/coordinator.yaml", "deploy/kubernetes/worker.yaml", "deploy/kubernetes/submit-job.yaml",
                     "deploy/systemd/tessera-coordinator.service", "deploy/systemd/tessera-worker@.service", "README.md",
                     "docs/cli.md", "docs/operations.md", "docs/security.md"]
        var checked = 0
        for file in files {
            let text = try String(contentsOf: Fixtures.repository.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let sub = ["coordinator", "worker", "submit", "transcode", "events"].first(where: {
                    line.contains("tessera \($0) ") || line.contains("[\"\($0)\"") || line.contains("\"\($0)\",")
                }) else { continue }
                let flags = line.split(whereSeparator: { !($0.isLetter || $0 == "-") }).filter { $0.hasPrefix("--") && $0.count > 2 }
                guard !flags.isEmpty else { continue }
                let help = try Tool.run(Tool.tesseraBinary, [sub, "--help"]).text
                for flag in flags {
                    #expect(help.contains(String(flag)), "\(file): `tessera \(sub)` has no \(flag)")
                    checked += 1
                }
            }
        }
        #expect(checked >= 10)
    }

    /// A YAML file of the repository (every document in it) as JSON values, read by python3's yaml.
    static func yaml(_ file: String) throws -> [[String: Any]] {
        let script = "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))"
        let result = try Tool.run("python3", ["-c", script, Fixtures.repository.appendingPathComponent(file).path])
        #expect(result.status == 0, "\(file): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]])
    }

    /// Compose as shipped: services that run restart unless stopped, the database password comes from a `.env` git
    /// ignores (its example committed, empty, so compose refuses to start until it is set), and a one-shot service
    /// gives ./media to the image's user before the coordinator starts.
    @Test func composeRestartsReadsItsSecretFromEnvAndOwnsItsMedia() throws {
        let compose = try #require(try Self.yaml("docker-compose.yml").first)
        let services = try #require(compose["services"] as? [String: [String: Any]])
        for name in ["postgres", "coordinator", "worker"] {
            #expect(services[name]?["restart"] as? String == "unless-stopped", "\(name)")
        }
        let text = try String(contentsOf: Fixtures.repository.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        #expect(text.matches(of: /PASSWORD: [A-Za-z0-9]+\n|tessera:tessera@/).isEmpty, "no password written in the file")
        let postgres = try #require(services["postgres"]?["environment"] as? [String: String])
        #expect(postgres["POSTGRES_PASSWORD"]?.hasPrefix("${POSTGRES_PASSWORD:?") == true, "required from the environment")
        let url = try #require((services["coordinator"]?["environment"] as? [String: String])?["TESSERA_DATABASE_URL"])
        #expect(url.contains("${POSTGRES_PASSWORD:?"))
        #expect(text.contains("cp .env.example .env") && !text.contains("Nothing secret is in this file"), "the header says where the secret is")

        let example = try String(contentsOf: Fixtures.repository.appendingPathComponent(".env.example"), encoding: .utf8)
        #expect(example.split(separator: "\n").contains("POSTGRES_PASSWORD="), "an empty password: compose refuses until one is set")
        let ignored = try Tool.run("git", ["-C", Fixtures.repository.path, "check-ignore", "-q", ".env"])
        #expect(ignored.status == 0, ".env is git-ignored")
        #expect(try Tool.run("git", ["-C", Fixtures.repository.path, "check-ignore", "-q", ".env.example"]).status == 1)

        let media = try #require(services["media"])
        #expect(media["user"] as? String == "root")
        #expect((media["command"] as? [String])?.joined().contains("chown 999:999 /media") == true)
        #expect((media["volumes"] as? [String])?.contains("./media:/media") == true)
        let after = try #require(services["coordinator"]?["depends_on"] as? [String: [String: String]])
        #expect(after["media"]?["condition"] == "service_completed_successfully")
        let dockerfile = try String(contentsOf: Fixtures.repository.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("--uid 999"), "the uid the media service gives /media to")
    }

    /// Kubernetes as shipped: make-secrets.sh works from a checkout with no tessera on PATH and no TESSERA (it finds
    /// this build), and every manifest, the NetworkPolicies among them, validates with its references resolved.
    @Test func kubernetesSecretsFromACheckoutAndEveryManifestValid() throws {
        let box = try Sandbox("k8s")
        defer { box.close() }
        var env = ProcessInfo.processInfo.environment
        env["TESSERA"] = nil
        env["PATH"] = "/usr/bin:/bin"
        let script = Fixtures.repository.appendingPathComponent("deploy/kubernetes/make-secrets.sh").path
        let secrets = box.path("secrets.yaml")
        let made = try Tool.run("/bin/bash", [script, "--out", secrets], environment: env)
        #expect(made.status == 0, "\(made.stderr)")
        let validate = Fixtures.repository.appendingPathComponent("deploy/kubernetes/validate.py").path
        let checked = try Tool.run("python3", [validate, secrets])
        #expect(checked.status == 0, "\(checked.text)\(checked.stderr)")

        let kinds = try Self.yaml("deploy/kubernetes/network-policy.yaml").compactMap { ($0["metadata"] as? [String: Any])?["name"] as? String }
        #expect(kinds == ["tessera-coordinator", "tessera-worker", "tessera-postgres"])
        let kustomization = try #require(try Self.yaml("deploy/kubernetes/kustomization.yaml").first)
        #expect((kustomization["resources"] as? [String])?.contains("network-policy.yaml") == true)

        let claim = try #require(try Self.yaml("deploy/kubernetes/storage.yaml").first { ($0["metadata"] as? [String: Any])?["name"] as? String == "tessera-media" })
        #expect((claim["spec"] as? [String: Any])?["accessModes"] as? [String] == ["ReadWriteMany"], "the coordinator and a submit Job mount it")
    }

    /// The submit Job is a valid Job that runs `tessera submit` with the store's URL from make-secrets.sh's Secret.
    @Test func theSubmitJobIsAValidJobRunningSubmit() throws {
        let script = """
            import sys, yaml, kubernetes_validate
            for doc in yaml.safe_load_all(open(sys.argv[1])):
                kubernetes_validate.validate(doc, "1.30.0", strict=True)
            """
        let file = Fixtures.repository.appendingPathComponent("deploy/kubernetes/submit-job.yaml").path
        let valid = try Tool.run("python3", ["-c", script, file])
        #expect(valid.status == 0, "\(valid.stderr)")
        let job = try #require(try Self.yaml("deploy/kubernetes/submit-job.yaml").first)
        #expect(job["kind"] as? String == "Job")
        let spec = try #require(((job["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((spec["containers"] as? [[String: Any]])?.first)
        #expect((container["args"] as? [String])?.first == "submit")
        let env = try #require(container["env"] as? [[String: Any]])
        let url = try #require(env.first { $0["name"] as? String == "TESSERA_DATABASE_URL" })
        #expect(((url["valueFrom"] as? [String: Any])?["secretKeyRef"] as? [String: String]) == ["name": "tessera-database", "key": "url"])
    }
}
