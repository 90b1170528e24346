import Dispatch
import Foundation

/// Turns SIGINT/SIGTERM into a callback (the job then stops and cleans up) instead of killing the process.
final class SignalTrap {
    private let sources: [DispatchSourceSignal]

    init(_ signals: [Int32], _ handler: @escaping @Sendable () -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func release() {
        for source in sources { source.cancel() }
    }
}
