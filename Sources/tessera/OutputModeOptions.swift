import ArgumentParser
import TesseraCore

/// `--output-mode`: the permission bits of the output files, in octal; without it the process's umask decides.
struct OutputModeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Permission bits of the outputs in octal, e.g. 0644 (a ladder's folders get 0755); default: from the umask (0640 under the systemd units' UMask=0027).",
                               valueName: "mode")) var outputMode: String?

    var bits: Int? { outputMode.flatMap(OutputMode.parse) }

    func validate() throws {
        if let outputMode, OutputMode.parse(outputMode) == nil {
            throw ValidationError("--output-mode \(outputMode) is not a mode: give octal permission bits, such as 0644")
        }
    }
}
