import ServiceLifecycle
import TesseraCore
import UnixSignals

/// A coordinator as a service. Its loop keeps a thread of its own (libzmq and libpq block), and graceful
/// shutdown or cancellation sets the loop's stop flag: it finishes its turn, lets its planning and stitching
/// threads end, and returns.
///
/// The private coordinator of `tessera transcode` is made only once its job is queued: that service starts
/// without one and waits until the job hands it over (`assign`).
public struct CoordinatorService: Service {
    let coordinator: Handoff<Coordinator>
    let ended = Locked<String?>(nil)

    public init(_ coordinator: Coordinator) {
        self.coordinator = Handoff()
        self.coordinator.hand(coordinator)
    }

    /// A service whose coordinator comes later, through `assign`.
    init() {
        coordinator = Handoff()
    }

    /// Gives the service its coordinator (once).
    func assign(_ coordinator: Coordinator) {
        self.coordinator.hand(coordinator)
    }

    /// Why the coordinator's loop stopped on its own, if it did.
    var failure: String? { ended.current }

    public func run() async throws {
        guard let coordinator = await coordinator.valueUnlessShutdown() else { return }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // SIGHUP: the authorized keys are read again (only a coordinator with keys has them).
                if coordinator.options.security != nil {
                    group.addTask {
                        for await _ in await UnixSignalsSequence(trapping: .sighup) { coordinator.reloadAuthorizedKeys() }
                    }
                }
                try await DedicatedThread.runUntilStopped("tessera-coordinator") { stop in try coordinator.run(stop: stop) }
                group.cancelAll()
            }
        } catch {
            ended.withValue { $0 = "\(error)" }
            throw error
        }
    }
}
