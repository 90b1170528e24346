import ServiceLifecycle
import TesseraStore

/// The embedded PostgreSQL as a service of the process that uses it (`tessera transcode`). `run` starts
/// the server once something asks for it (`url()`), so that a job refused before it is queued starts
/// nothing; `starting` is called only when it does not run yet. The server outlives the process, for
/// the next one (`tessera db stop` stops it), unless `stopsOnShutdown`: then shutdown stops it if this
/// service started it.
public struct EmbeddedPostgresService: Service {
    public let server: EmbeddedPostgres
    public let stopsOnShutdown: Bool
    /// Called once the server is wanted, before it starts (not when it runs already).
    let starting: (@Sendable () -> Void)?
    /// Whether the asker saw the server answering.
    let wanted = Handoff<Bool>()
    let started = Handoff<Result<String, StoreError>>()

    public init(server: EmbeddedPostgres, stopsOnShutdown: Bool = false, starting: (@Sendable () -> Void)? = nil) {
        self.server = server
        self.stopsOnShutdown = stopsOnShutdown
        self.starting = starting
    }

    /// The server's URL once it runs; the first call has `run` start it. `answering`: the caller has just
    /// seen it answer (`EmbeddedPostgres.isAnswering`, or a session from `JobStore(answering:)`), so it is
    /// not asked again.
    public func url(answering: Bool = false) async throws(StoreError) -> String {
        wanted.hand(answering)
        guard let result = await started.value else { throw StoreError("the job store shut down before it started") }
        return try result.get()
    }

    public func run() async {
        // Whoever waits for the URL is answered, whatever happens here.
        defer { started.withdraw() }
        guard let answering = await wanted.valueUnlessShutdown() else { return }
        let server = server, stopsOnShutdown = stopsOnShutdown, starting = starting
        let (result, startedHere) = await DedicatedThread.run("tessera-postgres") { () -> (Result<String, StoreError>, Bool) in
            // Running already with its database: the usual case, and one connection says so.
            if !stopsOnShutdown, answering || server.isAnswering { return (.success(server.url), false) }
            starting?()
            // Whether it ran already matters only to a service that stops what it started.
            let wasRunning = stopsOnShutdown ? (try? server.status().running) ?? false : true
            do throws(StoreError) {
                try server.start()
                return (.success(server.url), !wasRunning)
            } catch {
                return (.failure(error), false)
            }
        }
        started.hand(result)
        // The store stays up as long as the process's other services may use it.
        try? await gracefulShutdown()
        if startedHere {
            await DedicatedThread.run("tessera-postgres") { try? server.stop() }
        }
    }
}
