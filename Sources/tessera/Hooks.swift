import ArgumentParser
import Foundation
import TesseraCore
import TesseraEngine
import TesseraStore

/// `--on-complete CMD` and `--on-error CMD`: shell commands run once the command's result is known.
struct HookOptions: ParsableArguments {
    @Option(name: .customLong("on-complete"),
            help: ArgumentHelp("Shell command run (with /bin/sh -c) once the output is done; TESSERA_JOB_ID, TESSERA_STATE, TESSERA_INPUT, TESSERA_OUTPUT and TESSERA_WALL_SECONDS are in its environment.", valueName: "command"))
    var onComplete: String?

    @Option(name: .customLong("on-error"),
            help: ArgumentHelp("Shell command run when the job failed or was canceled; TESSERA_ERROR holds the one-line error of a failure.", valueName: "command"))
    var onError: String?

    var isSet: Bool { onComplete != nil || onError != nil }

    /// Runs `body`, then the hook its result calls for, and passes the result on: a hook never changes
    /// the exit status.
    func reporting(_ report: JobReport, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            ended(report, by: error)
            throw error
        }
        ended(report, by: nil)
    }

    func reporting(_ report: JobReport, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            ended(report, by: error)
            throw error
        }
        ended(report, by: nil)
    }

    /// The command ended, with `thrown` when it failed: the hook its result calls for runs.
    func ended(_ report: JobReport, by thrown: Error?) {
        report.ended(by: thrown)
        run(report)
    }

    func run(_ report: JobReport) {
        let (flag, command) = report.result == .done ? ("--on-complete", onComplete) : ("--on-error", onError)
        guard let command else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["TESSERA_ERROR"] = nil // set only for a failure, never inherited
        process.environment = environment.merging(report.environment) { $1 }
        // The hook's stdout goes to stderr: stdout is the command's own (a job id, the JSON result).
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.standardError
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            warn("\(flag) command could not start: \(error.localizedDescription)")
            return
        }
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal {
            warn("\(flag) command was killed by signal \(process.terminationStatus)")
        } else if process.terminationStatus != 0 {
            warn("\(flag) command exited with status \(process.terminationStatus)")
        }
    }

    func warn(_ message: String) {
        FileHandle.standardError.write(Data("tessera: warning: \(message)\n".utf8))
    }
}

/// What a hook is told: the job and how it ended. Filled in as the command runs.
final class JobReport {
    let input: String
    let output: String
    let started = Date()
    var jobID: String?
    /// The job's final state, once the store has it.
    var state: JobState?
    /// The one-line error the command reported.
    var error: String?

    /// `input` is nil when there is none (the generated sample clip).
    init(input: String?, output: String) {
        self.input = input.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? ""
        self.output = URL(fileURLWithPath: output).standardizedFileURL.path
    }

    func record(_ job: JobRecord) {
        jobID = job.id
        state = job.state
        if job.state == .failed { error = job.error ?? "job failed" }
    }

    /// Reports `error` as Tessera's one-line error and keeps it for the hook.
    func fail(_ error: some Error & CustomStringConvertible) -> ExitCode {
        self.error = error.description
        return Tessera.fail(error)
    }

    /// The command ended, with `thrown` when it failed.
    func ended(by thrown: Error?) {
        guard let thrown, error == nil, state != .canceled else { return }
        error = (thrown as? ExitCode).map { "exit status \($0.rawValue)" } ?? "\(thrown)"
    }

    /// done only when the job is done and nothing the command was asked for failed afterwards.
    var result: JobState {
        if state == .canceled { return .canceled }
        return state == .done && error == nil ? .done : .failed
    }

    var environment: [String: String] {
        var env = ["TESSERA_JOB_ID": jobID ?? "", "TESSERA_STATE": result.rawValue, "TESSERA_INPUT": input,
                   "TESSERA_OUTPUT": output, "TESSERA_WALL_SECONDS": String(format: "%.3f", Date().timeIntervalSince(started))]
        if result == .failed { env["TESSERA_ERROR"] = error ?? "failed" }
        return env
    }
}
