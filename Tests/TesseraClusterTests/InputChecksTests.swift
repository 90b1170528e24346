import Foundation
import Glibc
import Testing
import TesseraCore
import TesseraEngine
import ZMQKit
@testable import TesseraCluster

/// Input checks run off the coordinator's loop: asking returns at once while a check waits on the network,
/// one check answers for every ask of the same job, and each answer rings the loop's doorbell.
struct InputChecksTests {
    /// Whether `doorbell`'s descriptor is readable within `seconds`.
    static func rung(_ doorbell: Doorbell, within seconds: Double) -> Bool {
        var poller = pollfd(fd: doorbell.fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, Int32(seconds * 1000)) == 1
    }

    @Test func aSlowCheckDoesNotHoldTheAsker() throws {
        let doorbell = Doorbell()
        let checks = InputChecks(doorbell: doorbell)
        let release = DispatchSemaphore(value: 0), runs = Locked(0)
        let started = Date()
        for _ in 0..<3 {
            checks.check("slow") { () throws(TesseraError) in
                runs.withValue { $0 += 1 }
                release.wait()  // a HEAD request that has not been answered yet
            }
        }
        checks.check("replaced") { () throws(TesseraError) in throw .input("s3://media/in.mp4", "changed since the job was planned") }
        #expect(Date().timeIntervalSince(started) < 0.5, "asking waited for a check")
        #expect(checks.take().isEmpty)
        #expect(!Self.rung(doorbell, within: 0.2))
        release.signal()
        #expect(Self.rung(doorbell, within: 5))
        var outcomes: [InputChecks.Outcome] = []
        let deadline = Date().addingTimeInterval(5)
        while outcomes.count < 2, Date() < deadline {
            outcomes += checks.take()
            usleep(10_000)
        }
        #expect(outcomes.map(\.job) == ["slow", "replaced"])
        #expect(outcomes[0].error == nil)
        #expect(outcomes[1].error?.description == "s3://media/in.mp4: changed since the job was planned")
        #expect(runs.current == 1, "three asks of one job while its check was under way: one check")
    }

    @Test func aJobIsCheckedAgainOnceAnswered() throws {
        let checks = InputChecks(doorbell: nil)
        let runs = Locked(0)
        for _ in 0..<2 {
            checks.check("job") { () throws(TesseraError) in runs.withValue { $0 += 1 } }
            let deadline = Date().addingTimeInterval(5)
            while checks.take().isEmpty, Date() < deadline { usleep(10_000) }
        }
        #expect(runs.current == 2)
    }
}
