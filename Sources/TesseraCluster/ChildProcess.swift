import CTesseraShim
import Glibc

/// A child process started with `posix_spawn` (`tessera_spawn`): standard streams on /dev/null, every
/// other descriptor closed in one step. Foundation's `Process` closes them one at a time up to the
/// descriptor limit, tens of milliseconds a start under a high limit, on `tessera transcode`'s critical
/// path. Owned by one thread.
final class ChildProcess {
    let pid: pid_t
    private var status: Int32?

    /// Starts `path` with `arguments`; throws the error number when it cannot.
    init(_ path: String, _ arguments: [String]) throws(SpawnError) {
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var pid: Int32 = 0
        let code = tessera_spawn(&argv, nil, "/dev/null", "/dev/null", &pid)
        guard code == 0 else { throw SpawnError(code: -code) }
        self.pid = pid
    }

    /// A child this process forked itself (`WorkerPrefork`).
    init(forked pid: pid_t) {
        self.pid = pid
    }

    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        if reaped == pid { status = raw }
        return reaped == 0
    }

    /// SIGTERM, unless it has ended.
    func terminate() {
        if isRunning { kill(pid, SIGTERM) }
    }

    func waitUntilExit() {
        guard status == nil else { return }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
        status = raw
    }
}

/// A child process could not be started: the error number.
struct SpawnError: Error {
    var code: Int32
}
