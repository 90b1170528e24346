import ServiceLifecycle
import TesseraEngine

/// Blocking work (libzmq, libpq, pg_ctl, child processes) runs on a thread of its own, never on Swift's
/// few concurrency threads; the calling task awaits it without holding one.
public enum DedicatedThread {
    public static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            startThread(name: name) { continuation.resume(with: Result { try body() }) }
        }
    }

    public static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            startThread(name: name) { continuation.resume(returning: body()) }
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
