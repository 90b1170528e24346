import Foundation
import TesseraCore
import TesseraEngine

/// Progress on stderr: a redrawn bar on a terminal, plain lines otherwise (at most one per 10 %).
final class ProgressRenderer: Sendable {
    private let state = Locked(State())
    private let terminal = isatty(STDERR_FILENO) == 1

    struct State {
        var lastDecile = -1
        var lastPhase: TranscodeProgress.Phase?
        var drewBar = false
    }

    func update(_ p: TranscodeProgress) {
        state.withValue { s in
            if terminal {
                let width = 30
                let filled = Int(p.fraction * Double(width))
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                let line = String(format: "\r%-9@ [%@] %3d%%  %d/%d segments\u{1B}[K", p.phase.rawValue, bar, Int(p.fraction * 100),
                                  p.segmentsDone, p.segmentsTotal)
                FileHandle.standardError.write(Data(line.utf8))
                s.drewBar = true
            } else {
                // Plain lines start with the encoding; an input rejected while probing gets its one error line only.
                guard p.phase != .probing && p.phase != .planning else { return }
                let decile = Int(p.fraction * 10)
                guard p.phase != s.lastPhase || decile != s.lastDecile else { return }
                s.lastPhase = p.phase
                s.lastDecile = decile
                let line = p.phase == .encoding
                    ? "tessera: encoding \(Int(p.fraction * 100))% (\(p.segmentsDone)/\(p.segmentsTotal) segments, \(p.framesDone)/\(p.framesTotal) frames)\n"
                    : "tessera: \(p.phase.rawValue)\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
    }

    func finish() {
        state.withValue { s in
            if s.drewBar { FileHandle.standardError.write(Data("\n".utf8)); s.drewBar = false }
        }
    }
}

