import Foundation
import TesseraEngine

/// A fault of this coordinator's host that stops a job without being the job's fault: its results
/// cannot be spooled, or its output cannot be written. The job waits (nothing of it is leased) until
/// the fault clears, and fails with `reason` if it does not within the coordinator's limit.
struct LocalFault: Sendable, Equatable {
    /// The directory that has to take the bytes.
    var directory: String
    /// Bytes it needs free (a space shortage), or 0 (another write error: it must take a test write).
    var neededBytes: Int64
    /// What is wrong, in one line naming the place.
    var problem: String
    /// What the job waits for.
    var waitingFor: String

    /// One line for `status` and the job's events.
    var reason: String { "\(problem); waiting for \(waitingFor)" }

    /// A spool write that failed with `code`, needing about `bytes`.
    static func spool(_ directory: String, code: Int32, bytes: Int) -> LocalFault {
        let shortage = DiskSpace.isShortage(code)
        // Room for this result and the next: resuming for one result only to stop again helps no one.
        return LocalFault(directory: directory, neededBytes: shortage ? max(Int64(bytes) * 2, 1 << 20) : 0,
                          problem: "spool \(directory): \(String(cString: strerror(code)))", waitingFor: "it to take results again")
    }

    /// An output that could not be written; a shortage when its filesystem has less than `bytes` free.
    static func output(_ path: String, needing bytes: Int64) -> LocalFault? {
        let directory = (path as NSString).deletingLastPathComponent
        if let free = DiskSpace.available(directory), free < bytes {
            return LocalFault(directory: directory, neededBytes: bytes,
                              problem: "output \(path): no space left on the device (\(free >> 20) MB free, about \(bytes >> 20) MB needed)",
                              waitingFor: "space")
        }
        guard !DiskSpace.writable(directory) else { return nil }
        return LocalFault(directory: directory, neededBytes: 0,
                          problem: "output \(path): its directory cannot be written", waitingFor: "it to be writable")
    }

    /// Whether the fault has cleared.
    var cleared: Bool {
        if neededBytes > 0 { return (DiskSpace.available(directory) ?? 0) >= neededBytes }
        return DiskSpace.writable(directory)
    }
}
