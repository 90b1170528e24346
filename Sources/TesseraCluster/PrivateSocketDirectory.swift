import Foundation
import TesseraEngine

/// Where `tessera transcode` puts its coordinator's ipc socket: a new directory under /tmp that only this
/// user may enter. libzmq's ipc transport has no authentication, so a socket another local user could open
/// would let them join the private cluster as a worker; mkdtemp makes the directory 0700 whatever the umask.
/// (ipc paths are limited to about 100 bytes, so the directory is in /tmp, not the state directory.)
enum PrivateSocketDirectory {
    static func make() throws(TesseraError) -> URL {
        var template = Array("/tmp/tessera-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TesseraError(.output, "/tmp", "cannot make a private directory for the local cluster's socket: \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }
}
