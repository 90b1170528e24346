import Foundation
import TesseraCore
import TesseraEngine

/// What `/metrics` serves beside swift-metrics' registry, which writes no help text: a `# HELP` line for every
/// family, `tessera_build_info`, and the process's own `process_*` metrics, read from /proc at each scrape.
enum Exposition {
    /// One line per family, as `docs/operations.md` describes it.
    static let help: [String: String] = [
        "tessera_workers_connected": "Workers the coordinator hears from now.",
        "tessera_jobs": "Jobs in the store by state; served by one coordinator of the store at a time.",
        "tessera_segments": "Segments of the jobs that have not ended, by state; served by one coordinator of the store at a time.",
        "tessera_store_up": "1 when the scrape could count the store, 0 when it could not.",
        "tessera_store_gauges": "1 on the coordinator that serves the store-wide gauges (tessera_jobs, tessera_segments), 0 on the others.",
        "tessera_segments_completed_total": "Segments this coordinator recorded done.",
        "tessera_results_refused_total": "Results refused, by reason.",
        "tessera_leases_expired_total": "Leases that ran out without a result and went back to pending.",
        "tessera_workers_quarantined_total": "Workers quarantined for sending too many refused messages or a result an audit found wrong.",
        "tessera_audits_total": "Audits closed: a segment's result compared with another worker key's encode of it.",
        "tessera_audit_mismatches_total": "Audits whose two encodes differed (a third encode decides).",
        "tessera_audit_encode_seconds_total": "Seconds workers spent on audit encodes.",
        "tessera_payload_bytes_total": "Payload bytes sent to workers and results received.",
        "tessera_source_bytes_sent_total": "Source packet bytes inside the task payloads sent (workers reading from S3 get none).",
        "tessera_store_seconds": "Each job store statement or transaction.",
        "tessera_segment_encode_seconds": "Each segment's encode.",
        "tessera_encoded_frames_total": "Frames in the segments this worker encoded.",
        "tessera_segment_failures_total": "Encodes that failed (a canceled one is not a failure).",
        "tessera_worker_busy": "Segments being encoded now.",
        "tessera_worker_connected": "1 while the worker hears from a coordinator.",
        "tessera_build_info": "The build: Tessera's version, its wire protocol and its libavcodec, with the process's role.",
        "process_cpu_seconds_total": "User and system CPU time spent, in seconds.",
        "process_resident_memory_bytes": "Resident memory size in bytes.",
        "process_virtual_memory_bytes": "Virtual memory size in bytes.",
        "process_start_time_seconds": "Start time of the process since the Unix epoch, in seconds.",
        "process_open_fds": "Open file descriptors.",
        "process_max_fds": "The most file descriptors the process may open.",
    ]

    /// `text` with a `# HELP` line before each `# TYPE` line of a family that has none.
    static func withHelp(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 4096)
        var helped = Set<Substring>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# HELP ") {
                helped.insert(line.dropFirst(7).prefix { $0 != " " })
            } else if line.hasPrefix("# TYPE ") {
                let name = line.dropFirst(7).prefix { $0 != " " }
                if !helped.contains(name), let help = help[String(name)] { out += "# HELP \(name) \(help)\n" }
            }
            out += line
            out += "\n"
        }
        if out.hasSuffix("\n\n") { out.removeLast() }
        return out
    }

    /// One family of samples: `# HELP`, `# TYPE`, then each labelled value.
    static func family(_ name: String, _ type: String, _ samples: [(labels: [(String, String)], value: Double)]) -> String {
        var text = "# HELP \(name) \(help[name] ?? name)\n# TYPE \(name) \(type)\n"
        for sample in samples {
            let labels = sample.labels.isEmpty ? "" : "{" + sample.labels.map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",") + "}"
            text += "\(name)\(labels) \(number(sample.value))\n"
        }
        return text
    }

    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// `tessera_build_info{version,protocol,libavcodec,role} 1`.
    static func buildInfo(role: String) -> String {
        family("tessera_build_info", "gauge", [([("version", TesseraBuild.version), ("protocol", String(ClusterMessage.version)),
                                                  ("libavcodec", EngineInfo.libraryVersions["libavcodec"] ?? "unknown"), ("role", role)], 1)])
    }

    /// The process's CPU time, memory, start time and file descriptors, from /proc (Linux).
    static func process() -> String {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return "" }
        // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15, starttime 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        func field(_ n: Int) -> Double { fields.count > n - 3 ? Double(fields[n - 3]) ?? 0 : 0 }
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        let statm = ((try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "").split(separator: " ").compactMap { Double($0) }
        var text = family("process_cpu_seconds_total", "counter", [([], (field(14) + field(15)) / ticks)])
        if statm.count >= 2 {
            text += family("process_virtual_memory_bytes", "gauge", [([], statm[0] * page)])
            text += family("process_resident_memory_bytes", "gauge", [([], statm[1] * page)])
        }
        if let boot = bootTime() { text += family("process_start_time_seconds", "gauge", [([], boot + field(22) / ticks)]) }
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            text += family("process_open_fds", "gauge", [([], Double(open.count))])
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            text += family("process_max_fds", "gauge", [([], Double(limit.rlim_cur))])
        }
        return text
    }

    /// Seconds since the epoch when the machine booted (`btime` of /proc/stat).
    static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        return stat.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { Double($0.dropFirst(6)) }
    }
}
