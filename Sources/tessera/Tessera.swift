import ArgumentParser
import FFmpegKit
import Foundation
import TesseraCluster
import TesseraCore
import TesseraEngine

@main
struct Tessera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "Segment-parallel, frame-exact H.264/AAC transcoding to faststart MP4.",
        version: TesseraBuild.version,
        subcommands: [Transcode.self, Probe.self, Sample.self, Presets.self, Submit.self, Status.self, List.self, Watch.self, Events.self, Cancel.self, Prune.self,
                      Migrate.self, Db.self, CoordinatorCommand.self, Worker.self, Workers.self, Keygen.self])

    /// ffmpeg's words are read before parsing (see `FFmpegHabits`): a hint or an unknown command is one
    /// line on stderr and exit status 64, as the parser's own usage errors.
    static func main() async {
        let commands = configuration.subcommands.map { $0._commandName }
        switch FFmpegHabits.review(Array(CommandLine.arguments.dropFirst()), commands: commands) {
        case .proceed(let arguments):
            // What `main(_:)` does, with the transcode's workers forked between the parse and the run.
            do {
                var command = try parseAsRoot(arguments)
                if let transcode = command as? Transcode, let handed = WorkerPrefork.fork(count: transcode.workersToFork) {
                    // This process is one of those workers: it runs what its parent handed it.
                    await main(handed)
                    return
                }
                if var command = command as? AsyncParsableCommand { try await command.run() } else { try command.run() }
                WorkerPrefork.release()
            } catch {
                WorkerPrefork.release()
                Self.exit(after: error)
            }
        case .refuse(let message):
            FileHandle.standardError.write(Data("tessera: \(message)\n".utf8))
            Self.exit(withError: ExitCode.validationFailure)
        }
    }

    /// Ends the process after `error`: a failure that is no usage mistake (an option `validate()` refused, say)
    /// is one line on stderr and exit status 1, as `fail` writes it; usage mistakes and help go as the parser has them.
    static func exit(after error: Error) -> Never {
        let line = Self.message(for: error)
        guard Self.exitCode(for: error) == .failure, !line.isEmpty else { Self.exit(withError: error) }
        FileHandle.standardError.write(Data("tessera: \(line)\n".utf8))
        Self.exit(withError: ExitCode.failure)
    }

    /// Errors reach the user as one line on stderr and exit status 1.
    static func fail(_ error: some Error & CustomStringConvertible) -> ExitCode {
        FileHandle.standardError.write(Data("tessera: \(error.description)\n".utf8))
        return ExitCode(1)
    }
}
