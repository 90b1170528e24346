import TesseraCore

/// Set once (Ctrl-C, SIGTERM, a cancel request); every stage of a job checks it and stops promptly.
public final class CancellationFlag: Sendable {
    private let state = Locked(false)

    public init() {}

    public func cancel() { state.withValue { $0 = true } }
    public var isCancelled: Bool { state.current }

    func check() throws(TesseraError) {
        if isCancelled { throw TesseraError.canceled }
    }
}

extension TesseraError {
    public static let canceled = TesseraError(.canceled, "", "canceled")
}
