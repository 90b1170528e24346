import ArgumentParser
import TesseraEngine

struct Sample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Generate a sample clip (H.264 + AAC MP4 with motion and a tone) to try Tessera on.")

    @Argument(help: "Where to write the clip.") var output: String
    @Option(help: "Length in seconds.") var seconds: Int = 10
    @Option(help: "Frame size, WxH.") var size: String = "1280x720"
    @OptionGroup var overwriting: OverwriteOptions

    func run() throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 16, parts[1] >= 16, parts[0] % 2 == 0, parts[1] % 2 == 0 else {
            throw ValidationError("--size must be WxH with even numbers of at least 16, e.g. 1280x720")
        }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
        EngineInfo.configureLogging(verbose: false)
        do throws(TesseraError) {
            try FilePaths.check(input: nil, output: output)
            try overwriting.check([output])
            try SampleGenerator.generate(to: output, seconds: seconds, width: parts[0], height: parts[1])
        } catch {
            throw Tessera.fail(error)
        }
    }
}
