import Logging
import ServiceLifecycle

extension ServiceGroupConfiguration {
    /// The services a tessera process is made of. SIGTERM and SIGINT shut them down gracefully, the last
    /// listed first.
    public static func process(_ services: [ServiceConfiguration], logger: Logger) -> ServiceGroupConfiguration {
        ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    }

    /// Services of which the first to end, returning or throwing, shuts the others down gracefully; its
    /// error is what the group's run throws.
    public static func process(_ services: [any Service], logger: Logger) -> ServiceGroupConfiguration {
        process(services.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                                     failureTerminationBehavior: .gracefullyShutdownGroup) },
                logger: logger)
    }
}
