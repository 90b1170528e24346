import ServiceLifecycle
import TesseraStore

/// The embedded PostgreSQL as a service of the process that uses it (`tessera transcode`). `run` starts
/// the server once something asks for it (`url()`), so that a job refused before it is queued starts
/// nothing. The server outlives the process, for the next one (`tessera db stop` stops it), unless
/// `stopsOnShutdown`: then shutdown stops it if this service started it.
public struct EmbeddedPostgresService: Service {
    public let server: EmbeddedPostgres
    public let stopsOnShutdown: Bool
    /// Called once the server is wanted, before it starts.
    let starting: (@Sendable () -> Void)?
    let wanted = Handoff<Void>()
    let started = Handoff<Result<String, StoreError>>()

    public init(server: EmbeddedPostgres, stopsOnShutdown: Bool = false, starting: (@Sendable () -> Void)? = nil) {
        self.server = server
        self.stopsOnShutdown = stopsOnShutdown
        self.starting = starting
    }

    /// The server's URL once it runs; the first call has `run` start it.
    public func url() async throws(StoreError) -> String {
        wanted.hand(())
        guard let result = await started.value else { throw StoreError("the job store shut down before it started") }
        return try result.get()
    }

    public func run() async {
        // Whoever waits for the URL is answered, whatever happens here.
        defer { started.withdraw() }
        guard await wanted.valueUnlessShutdown() != nil else { return }
        starting?()
        let server = server, stopsOnShutdown = stopsOnShutdown
        let (result, startedHere) = await DedicatedThread.run("tessera-postgres") { () -> (Result<String, StoreError>, Bool) in
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
