import ServiceLifecycle
import TesseraCore
import TesseraEngine

/// Blocking work (libzmq, libpq, pg_ctl, child processes) runs on a thread of its own, never on Swift's
/// few concurrency threads; the calling task awaits it without holding one. `body` and what it returns are
/// handed over whole (`sending`): a store connection opened on one thread goes to the next without a box.
public enum DedicatedThread {
    public static func run<T>(_ name: String, _ body: sending @escaping () throws -> sending T) async throws -> sending T {
        let sent = UnsafeTransfer(body)
        return try await withCheckedThrowingContinuation { continuation in
            startThread(name: name) {
                do { continuation.resume(returning: try sent.value()) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    public static func run<T>(_ name: String, _ body: sending @escaping () -> sending T) async -> sending T {
        let sent = UnsafeTransfer(body)
        return await withCheckedContinuation { continuation in
            startThread(name: name) { continuation.resume(returning: sent.value()) }
        }
    }

    /// Runs `body` with `value`, which goes to the thread whole: what `body` makes of it may come back.
    public static func run<V, T>(_ name: String, handing value: sending V,
                                 _ body: sending @escaping (sending V) throws -> sending T) async throws -> sending T {
        let sent = UnsafeTransfer((value, body))
        return try await withCheckedThrowingContinuation { continuation in
            startThread(name: name) {
                let (value, body) = sent.value
                do { continuation.resume(returning: try body(value)) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// Runs a blocking loop until it returns. Its `stop` flag is set when the calling task (a service) shuts
    /// down gracefully or is cancelled; the loop is awaited to its end either way, so nothing is left half done.
    public static func runUntilStopped(_ name: String, _ body: @escaping @Sendable (_ stop: CancellationFlag) throws -> Void) async throws {
        let stop = CancellationFlag()
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await run(name) { try body(stop) }
        } onCancelOrGracefulShutdown: {
            stop.cancel()
        }
    }
}

/// A blocking loop as a service: it runs on a thread of its own and is asked to stop, through its flag, on
/// graceful shutdown (SIGTERM, SIGINT) or cancellation.
public struct ThreadService: Service {
    public let name: String
    let body: @Sendable (_ stop: CancellationFlag) throws -> Void

    public init(_ name: String, _ body: @escaping @Sendable (_ stop: CancellationFlag) throws -> Void) {
        self.name = name
        self.body = body
    }

    public func run() async throws {
        try await DedicatedThread.runUntilStopped(name, body)
    }
}
