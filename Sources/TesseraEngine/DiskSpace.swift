import Foundation

/// Free space and writability of a directory's filesystem: what a job stalled on a local fault waits for.
public enum DiskSpace {
    /// Bytes an unprivileged writer may still use on the filesystem that holds `directory`; nil when it
    /// cannot be read.
    public static func available(_ directory: String) -> Int64? {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Whether a file can be created, written and removed in `directory` now.
    public static func writable(_ directory: String) -> Bool {
        let probe = (directory as NSString).appendingPathComponent(".tessera-probe-\(getpid())")
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { unlink(probe) }
        let written = [UInt8](repeating: 0, count: 4096).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return close(fd) == 0 && written == 4096
    }

    /// Whether an error code means the filesystem is out of space (or quota).
    public static func isShortage(_ code: Int32) -> Bool { code == ENOSPC || code == EDQUOT }
}
