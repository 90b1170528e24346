import Foundation
import Logging
import TesseraEngine

/// FFmpeg's and libx264's log lines, and the engine's own, stay out of a test run's output unless
/// `TESSERA_TEST_VERBOSE=1` asks for them.
package enum TestLogging {
    package static let verbose = ProcessInfo.processInfo.environment["TESSERA_TEST_VERBOSE"] == "1"

    /// Sets FFmpeg's log level for this process once; each helper that runs the engine in process reads it first.
    package static let configured: Void = EngineInfo.configureLogging(verbose: verbose)

    /// A logger for the engine under test: errors only unless verbose.
    package static func logger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = verbose ? .info : .error
        return logger
    }
}
