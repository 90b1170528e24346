import ArgumentParser
import FFmpegKit
import Foundation
import TesseraEngine

@main
struct Tessera: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "Segment-parallel, frame-exact H.264/AAC transcoding to faststart MP4.",
        version: "0.1.0",
        subcommands: [Transcode.self, Probe.self, Sample.self, Presets.self, Submit.self, Status.self, List.self, Watch.self, Events.self, Cancel.self,
                      Migrate.self, Db.self, CoordinatorCommand.self, Worker.self, Keygen.self])

    /// Errors reach the user as one line on stderr and exit status 1.
    static func fail(_ error: some Error & CustomStringConvertible) -> ExitCode {
        FileHandle.standardError.write(Data("tessera: \(error.description)\n".utf8))
        return ExitCode(1)
    }
}
