import Foundation
import Testing
@testable import TesseraCluster

@Suite struct PrivateSocketDirectoryTests {
    /// 0700 whatever the umask (the usual 022 would leave a plain directory 0755).
    @Test func theSocketsDirectoryIsTheUsersAlone() throws {
        let first = try PrivateSocketDirectory.make(), second = try PrivateSocketDirectory.make()
        defer { for url in [first, second] { try? FileManager.default.removeItem(at: url) } }
        #expect(first != second)
        for url in [first, second] {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o700)
            #expect((attributes[.ownerAccountID] as? Int).map(UInt32.init) == getuid())
            #expect(url.path.count < 80, "room for the socket's name within libzmq's ipc path limit")
        }
    }
}
