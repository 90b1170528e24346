import Foundation
import TesseraCore
import TesseraEngine

/// Progress on stderr: a redrawn bar on a terminal, plain lines otherwise (at most one per 10 %).
final class ProgressRenderer: Sendable {
    private let state = Locked(State())
    private let terminal = isatty(STDERR_FILENO) == 1

    struct State {
        var lastDecile = -1
        var lastLabel: String?
        var drewBar = false
    }

    func update(_ p: TranscodeProgress) {
        state.withValue { s in
            if terminal {
                let width = 30
                let filled = Int(p.fraction * Double(width))
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                let line = String(format: "\r%-11@ [%@] %3d%%  %@\u{1B}[K", p.label, bar, Int(p.fraction * 100), Self.figures(p))
                FileHandle.standardError.write(Data(line.utf8))
                s.drewBar = true
            } else {
                // Plain lines start with the encoding; an input rejected while probing gets its one error line only.
                guard p.phase != .probing && p.phase != .planning else { return }
                let decile = Int(p.fraction * 10)
                // Each pass of a two-pass job counts its frames from 0: a new label starts the deciles again.
                guard p.label != s.lastLabel || decile != s.lastDecile else { return }
                s.lastLabel = p.label
                s.lastDecile = decile
                let line = p.phase == .encoding
                    ? "tessera: \(p.label) \(Int(p.fraction * 100))% (\(Self.figures(p)))\n"
                    : "tessera: \(p.label)\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
    }

    /// Frames done of total, then the speed and the time left once the rate is known:
    /// `1350/3000 frames  112 fps  4.5x  0:15 left`.
    static func figures(_ p: TranscodeProgress) -> String {
        var parts = ["\(p.framesDone)/\(p.framesTotal) frames"]
        if p.phase == .encoding, let fps = p.fps {
            parts.append(String(format: "%.0f fps", fps))
            if let speed = p.speed { parts.append(String(format: "%.1fx", speed)) }
            if let eta = p.etaSeconds {
                let seconds = Int(eta.rounded())
                parts.append(String(format: "%d:%02d left", seconds / 60, seconds % 60))
            }
        }
        return parts.joined(separator: "  ")
    }

    func finish() {
        state.withValue { s in
            if s.drewBar { FileHandle.standardError.write(Data("\n".utf8)); s.drewBar = false }
        }
    }
}

