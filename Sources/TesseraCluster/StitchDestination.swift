import Foundation
import TesseraEngine

/// Where a stitch writes a job's output and how it moves it into place: one MP4 through a temporary beside it, or a
/// ladder's folder or per-rung files (`LadderOutput`). The coordinator's stitch treats both alike.
enum StitchDestination {
    case file(temporary: String, output: String)
    case ladder(LadderOutput)

    init(plan: JobPlan, output: String) {
        self = LadderOutput(plan: plan, output: output).map { .ladder($0) } ?? .file(temporary: OutputPath.temporary(for: output), output: output)
    }

    /// Removes what is still temporary.
    func discard() {
        switch self {
        case .file(let temporary, _): try? FileManager.default.removeItem(atPath: temporary)
        case .ladder(let ladder): ladder.discard()
        }
    }

    /// Moves the verified output into place, with permission bits `mode` when one is asked for.
    func commit(mode: Int?) throws(TesseraError) {
        switch self {
        case .file(let temporary, let output): try OutputPath.commit(temporary, to: output, mode: mode)
        case .ladder(let ladder): try ladder.commit(mode: mode)
        }
    }

    /// Removes the output after it was moved into place (the job was canceled between the check and the rename).
    func removePlaced() {
        switch self {
        case .file(_, let output): try? FileManager.default.removeItem(atPath: output)
        case .ladder(let ladder): ladder.removePlaced()
        }
    }

    /// The path whose directory decides whether a failure is the disk's.
    var faultPath: String {
        switch self {
        case .file(_, let output): output
        case .ladder(let ladder): ladder.faultPath
        }
    }
}
