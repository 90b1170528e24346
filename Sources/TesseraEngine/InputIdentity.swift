import Foundation
import S3Kit
import TesseraCore

/// What a job's input was when it was planned: its size, modification time and a digest of its probe
/// (every video packet's timestamps, size and flags), and the host, device and inode it was read on.
/// Every reopen checks it, so a file replaced mid-job fails the job instead of mixing two files.
/// Device and inode are compared only on the host that recorded them (a shared filesystem numbers
/// them per host).
public struct InputIdentity: Codable, Sendable, Equatable {
    public var size: Int64
    public var modifiedSeconds: Int
    public var modifiedNanoseconds: Int
    public var probeDigest: String
    public var host: String
    public var device: UInt64
    public var inode: UInt64
    /// An object in S3: the ETag that pins it for the whole job (nil for a file). Its reads carry it (`If-Match`).
    public var etag: String?

    /// The input of `probe` as it is now; refused when it changed since it was probed.
    public init(of probe: ProbeResult) throws(TesseraError) {
        let path = probe.path
        if let object = probe.object {
            // No file: the size and the ETag say which object, wherever it is read from.
            self.init(stat(), probeDigest: Self.digest(probe.packets))
            (size, host, etag) = (object.size, "", object.etag)
            return
        }
        guard let now = Self.fileStatus(path) else { throw .input(path, "cannot be read any more (\(String(cString: strerror(errno))))") }
        if let stamp = probe.stamp, stamp.size != Int64(now.st_size) || stamp.modifiedSeconds != now.st_mtim.tv_sec
            || stamp.modifiedNanoseconds != now.st_mtim.tv_nsec {
            throw .input(path, "changed while it was being read")
        }
        self.init(now, probeDigest: Self.digest(probe.packets))
    }

    /// The file `stat` describes, on this host, with `probeDigest` (which a stat cannot read).
    init(_ now: stat, probeDigest: String) {
        size = Int64(now.st_size)
        modifiedSeconds = now.st_mtim.tv_sec
        modifiedNanoseconds = now.st_mtim.tv_nsec
        self.probeDigest = probeDigest
        host = ProcessInfo.processInfo.hostName
        device = UInt64(now.st_dev)
        inode = UInt64(now.st_ino)
    }

    /// A digest of the packet table: the same file probes the same.
    static func digest(_ packets: [PacketInfo]) -> String {
        var hasher = FNV1a64()
        var fields: [Int64] = [Int64(packets.count)]
        fields.reserveCapacity(packets.count * 5 + 1)
        for p in packets {
            fields += [p.demuxedPTS ?? .min, p.dts ?? .min, p.duration, Int64(p.size), (p.keyFlag ? 1 : 0) | (p.discard ? 2 : 0)]
        }
        fields.withUnsafeBytes { hasher.update($0) }
        return String(hasher.value, radix: 16)
    }

    static func fileStatus(_ path: String) -> stat? {
        var info = stat()
        return stat(path, &info) == 0 ? info : nil
    }

    /// Refuses an input that is not this one any more: a one-line reason naming the file.
    public func check(_ path: String) throws(TesseraError) {
        if let location = S3Location(url: path) {
            let now: S3ObjectInfo
            do { now = try InputSource.head(location) } catch {
                throw .input(path, "is gone or unreadable since the job was planned (\(error.problem))")
            }
            if now.etag != etag || now.size != size { throw .input(path, "changed since the job was planned (another version of the object)") }
            return
        }
        guard let now = Self.fileStatus(path) else {
            throw .input(path, "is gone since the job was planned (\(String(cString: strerror(errno))))")
        }
        try check(InputIdentity(now, probeDigest: probeDigest), path: path)
    }

    /// Refuses another identity for the same input (a probe of it again, by this or another coordinator).
    public func check(_ other: InputIdentity, path: String) throws(TesseraError) {
        var differences: [String] = []
        if size != other.size { differences.append("size \(size) → \(other.size) bytes") }
        if (modifiedSeconds, modifiedNanoseconds) != (other.modifiedSeconds, other.modifiedNanoseconds) { differences.append("modified again") }
        if probeDigest != other.probeDigest { differences.append("other video packets") }
        if etag != other.etag { differences.append("another version of the object") }
        if host == other.host, (device, inode) != (other.device, other.inode) { differences.append("another file renamed over it") }
        if !differences.isEmpty { throw .input(path, "changed since the job was planned (\(differences.joined(separator: ", ")))") }
    }

    /// As JSON, for the store.
    public var json: String { String(decoding: CanonicalJSON.data(self), as: UTF8.self) }

    public init(json: String) throws(TesseraError) {
        do { self = try CanonicalJSON.decode(InputIdentity.self, from: Array(json.utf8)) } catch {
            throw TesseraError(.input, "", "the recorded input identity is unreadable (\(error))")
        }
    }
}

extension JobPlan {
    /// Refuses an input that is not the one the job pinned (no identity: nothing to compare).
    public func checkInput() throws(TesseraError) {
        try inputIdentity?.check(inputPath)
    }
}
