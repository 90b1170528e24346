import CTesseraShim
import Glibc
import TesseraCore

/// Worker processes forked by `tessera transcode` before it starts a thread, each waiting on a pipe for its
/// `tessera worker` arguments. A forked child has this binary and its 140 shared libraries already loaded and
/// bound: it skips the 20-25 ms of processor time a fresh start costs, while the command probes and plans on
/// the same cores. `LocalWorkerPool` hands them their arguments; a replacement is a fresh process.
public enum WorkerPrefork {
    struct Child {
        var pid: pid_t
        var pipe: Int32
    }

    static let waiting = Locked<[Child]>([])
    static let handed = Locked(0)

    /// Children handed their arguments so far.
    public static var handedOut: Int { handed.current }

    /// Forks `count` waiting children, unless this process already runs a second thread (a fork would copy
    /// its locks, not the thread). In a child, returns the arguments its parent handed it; in the parent, nil.
    public static func fork(count: Int) -> [String]? {
        guard count > 0, tessera_thread_count() == 1 else { return nil }
        for _ in 0..<count {
            var fd: Int32 = -1
            let pid = tessera_prefork(&fd)
            if pid < 0 { break }
            if pid == 0 {
                // The siblings forked before this child are not its own, and their pipes closed at the fork.
                waiting.withValue { $0 = [] }
                return arguments(from: fd)
            }
            waiting.withValue { $0.append(Child(pid: pid, pipe: fd)) }
        }
        return nil
    }

    /// A waiting child, given `arguments`; nil when none is left.
    static func take(handing arguments: [String]) -> ChildProcess? {
        guard let child = waiting.withValue({ $0.isEmpty ? nil : $0.removeFirst() }) else { return nil }
        defer { close(child.pipe) }
        var block = Array(arguments.joined(separator: "\0").utf8)
        block.append(0)
        var sent = 0
        while sent < block.count {
            let wrote = block[sent...].withUnsafeBytes { write(child.pipe, $0.baseAddress, $0.count) }
            if wrote < 0, errno == EINTR { continue }
            if wrote <= 0 {
                kill(child.pid, SIGKILL)
                waitpid(child.pid, nil, 0)
                return nil
            }
            sent += wrote
        }
        handed.withValue { $0 += 1 }
        return ChildProcess(forked: child.pid)
    }

    /// Lets every child still waiting go: each exits on its closed pipe.
    public static func release() {
        let children = waiting.withValue { children in defer { children = [] }; return children }
        for child in children { close(child.pipe) }
        for child in children { waitpid(child.pid, nil, 0) }
    }

    /// In the child: waits for the block, NUL-separated arguments ending in NUL.
    private static func arguments(from fd: Int32) -> [String] {
        var block: UnsafeMutablePointer<CChar>?
        let length = tessera_prefork_await(fd, &block)
        defer { free(block) }
        let bytes = UnsafeRawBufferPointer(start: block, count: Int(length))
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
        // ps shows a worker, not a second copy of the command line.
        tessera_set_process_title(CommandLine.argc, CommandLine.unsafeArgv, (["tessera"] + arguments).joined(separator: " "))
        return arguments
    }
}
