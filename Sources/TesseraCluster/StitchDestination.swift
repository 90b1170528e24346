import Foundation
import TesseraCore
import TesseraEngine

/// Where a stitch writes a job's output and how it moves it into place: one MP4 through a temporary beside it, a
/// ladder's folder or per-rung files (`LadderOutput`), or an object in S3 streamed into an upload whose first part
/// waits for the commit (`ObjectStitch`). The coordinator's stitch treats them alike.
enum StitchDestination {
    case file(temporary: String, output: String)
    case ladder(LadderOutput)
    case object(StreamedObject)

    /// An S3 output: its upload, once stitched and verified, waiting to be completed.
    final class StreamedObject: @unchecked Sendable {
        let location: S3Location
        private let pending = Locked<PendingObject?>(nil)

        init(_ location: S3Location) { self.location = location }

        func hold(_ object: PendingObject) { pending.withValue { $0 = object } }

        func take() -> PendingObject? { pending.withValue { held in defer { held = nil }; return held } }
    }

    init(plan: JobPlan, output: String) {
        if plan.ladder == nil, let location = S3Location(url: output) {
            self = .object(StreamedObject(location))
            return
        }
        self = LadderOutput(plan: plan, output: output).map { .ladder($0) } ?? .file(temporary: OutputPath.temporary(for: output), output: output)
    }

    /// Removes what is still temporary.
    func discard() {
        switch self {
        case .file(let temporary, _): try? FileManager.default.removeItem(atPath: temporary)
        case .ladder(let ladder): ladder.discard()
        case .object(let object): object.take()?.abort()
        }
    }

    /// Moves the verified output into place, with permission bits `mode` when one is asked for.
    func commit(mode: Int?) throws(TesseraError) {
        switch self {
        case .file(let temporary, let output): try OutputPath.commit(temporary, to: output, mode: mode)
        case .ladder(let ladder): try ladder.commit(mode: mode)
        case .object(let object):
            // The upload aborts itself on failure.
            guard let pending = object.take() else { throw .output(object.location.description, "was not stitched") }
            try pending.complete()
        }
    }

    /// Removes the output after it was moved into place (the job was canceled between the check and the rename).
    func removePlaced() {
        switch self {
        case .file(_, let output): try? FileManager.default.removeItem(atPath: output)
        case .ladder(let ladder): ladder.removePlaced()
        case .object(let object): ObjectUpload.remove(object.location)
        }
    }

    /// The path whose directory decides whether a failure is the disk's; none for an object, which is on no disk here.
    var faultPath: String? {
        switch self {
        case .file(_, let output): output
        case .ladder(let ladder): ladder.faultPath
        case .object: nil
        }
    }
}
