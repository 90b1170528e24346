import ArgumentParser
import Foundation
import TesseraCluster
import TesseraCore
import TesseraEngine

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show an input's streams, keyframe structure and cut plan, without decoding it.")

    @Argument(help: "The input file.") var input: String
    @Flag(help: "Print JSON for scripts.") var json = false
    @Flag(help: "Also list every video packet (decode order): pts, dts, duration, key flag, random-access class.") var packets = false
    @OptionGroup var planning: PlanningOptions

    func run() throws {
        EngineInfo.configureLogging(verbose: false)
        do throws(TesseraError) {
            if let problem = FFmpegHabits.notAFile(input) { throw TesseraError.input(input, problem) }
            let probe = try MediaProbe.probe(input)
            let plan = try JobPlanner.plan(probe, options: planning.jobOptions)
            var report = ProbeReport(plan)
            if packets { report.packets = probe.packets.map(ProbeReport.Packet.init) }
            print(json ? CanonicalJSON.encode(report, pretty: true) : report.text)
            if !json, let seconds = planning.segmentSeconds { print(Self.segmentNote(seconds, workers: planning.resolvedWorkers)) }
        } catch {
            throw Tessera.fail(error)
        }
    }
}

extension Probe {
    /// What a segment length gives: whole GOPs of about that length, cut finer for two segments per encoder; a
    /// cluster's coordinator plans such a job for its own count of encoders, whatever `--workers` says here.
    static func segmentNote(_ seconds: Double, workers: Int) -> String {
        let cluster = Coordinator.Options.defaultPlanningWorkers, length = String(format: "%g", seconds)
        return "--segment-seconds \(length): whole GOPs of about \(length) s, cut finer (down to 1 s) where that makes fewer than "
            + "\(2 * workers) segments, two per encoder (--workers \(workers)); a cluster's coordinator plans for \(cluster) encoders, "
            + "\(2 * cluster) segments: --workers \(cluster) shows its plan"
    }
}

/// What `tessera probe` prints. The JSON keys are stable for scripts.
struct ProbeReport: Codable {
    struct Stream: Codable {
        var index: Int
        var type: String
        var codec: String
        var width: Int?
        var height: Int?
        var pixelFormat: String?
        var frameRate: String?
        var sampleRate: Int?
        var channels: Int?
        var rotation: Double?
    }

    struct Segment: Codable {
        var index: Int
        var startSeconds: Double
        var endSeconds: Double
        var frames: Int
        var packets: Int
        var preRollPackets: Int
        var entry: String
        /// Whether the segment starts where a whole-file encode puts an IDR frame (null: no forecast).
        var atForecastKeyframe: Bool?
        /// libx264 threads the plan gives the segment (a job's tail that would otherwise run alone); null: the worker's.
        var encoderThreads: Int?
    }

    var input: String
    var format: String
    var durationSeconds: Double
    var streams: [Stream]
    var videoStream: Int
    var frames: Int
    var structure: String
    var randomAccessPoints: Int
    var keyFlagsNotRandomAccess: Int
    var undecodableLeadingPackets: Int
    /// Pictures the demuxer gave no pts, timed by the probe's decode.
    var timedByDecoding: Int
    var preRollPackets: Int
    var preRollRatio: Double
    /// Where one whole-file encode puts IDR frames, and the scene changes read from the keyframes or
    /// found by decoding, in seconds from the first frame; null when a segment length was asked for.
    var forecastKeyframeSeconds: [Double]?
    var sceneChangeSeconds: [Double]?
    /// Seconds spent decoding to find scene changes.
    var sceneAnalysisSeconds: Double
    /// Frames it decoded (a frame decoded twice counts twice).
    var sceneAnalysisFrames: Int
    var segments: [Segment]
    var packets: [Packet]?

    struct Packet: Codable {
        var index: Int
        var pts: Int64?
        var dts: Int64?
        var duration: Int64
        var key: Bool
        var randomAccess: String
        var size: Int
        /// True where the demuxer gave no pts and `pts` is the probe's.
        var ptsInferred: Bool?

        init(_ p: PacketInfo) {
            index = p.index
            pts = p.pts
            dts = p.dts
            duration = p.duration
            key = p.keyFlag
            randomAccess = p.randomAccess.rawValue
            size = p.size
            ptsInferred = p.ptsInferred ? true : nil
        }
    }

    init(_ plan: JobPlan) {
        let probe = plan.probe
        let cuts = plan.cuts
        let tb = cuts.timeBase
        input = probe.path
        format = probe.formatName
        durationSeconds = cuts.durationSeconds.rounded6
        streams = probe.streams.map {
            Stream(index: $0.index, type: $0.kind.rawValue, codec: $0.codecName,
                   width: $0.kind == .video ? $0.width : nil, height: $0.kind == .video ? $0.height : nil,
                   pixelFormat: $0.pixelFormat, frameRate: $0.kind == .video ? $0.averageFrameRate.description : nil,
                   sampleRate: $0.kind == .audio ? $0.sampleRate : nil, channels: $0.kind == .audio ? $0.channels : nil,
                   rotation: $0.rotation)
        }
        videoStream = probe.video.index
        frames = cuts.frameCount
        structure = cuts.structure.rawValue
        randomAccessPoints = cuts.randomAccessPoints
        keyFlagsNotRandomAccess = cuts.keyFlagsNotRandomAccess
        undecodableLeadingPackets = cuts.undecodableLeadingPackets
        timedByDecoding = probe.packets.filter(\.ptsInferred).count
        preRollPackets = cuts.totalPreRollPackets
        preRollRatio = cuts.preRollRatio.rounded6
        func seconds(_ pts: Int64) -> Double { tb.seconds(pts - cuts.firstPTS).rounded6 }
        forecastKeyframeSeconds = cuts.forecastKeyframes?.map(seconds)
        sceneChangeSeconds = cuts.sceneChanges?.map(seconds)
        sceneAnalysisSeconds = probe.sceneAnalysisSeconds.rounded6
        sceneAnalysisFrames = probe.sceneAnalysisFrames
        let forecast = cuts.forecastKeyframes.map(Set.init)
        segments = cuts.segments.map {
            Segment(index: $0.index, startSeconds: seconds($0.startPTS), endSeconds: seconds($0.endPTS), frames: $0.frameCount,
                    packets: $0.packetCount, preRollPackets: $0.preRollPackets, entry: $0.entry.rawValue,
                    atForecastKeyframe: forecast.map { [start = $0.startPTS] in $0.contains(start) }, encoderThreads: $0.encoderThreads)
        }
    }

    var text: String {
        var lines = ["\(input): \(format), \(String(format: "%.3f", durationSeconds)) s"]
        for s in streams {
            var line = "  stream \(s.index): \(s.type) \(s.codec)"
            if let w = s.width, let h = s.height { line += " \(w)x\(h)" }
            if let p = s.pixelFormat { line += " \(p)" }
            if let f = s.frameRate { line += " \(f) fps" }
            if let r = s.sampleRate, let c = s.channels { line += " \(r) Hz \(c) ch" }
            if let r = s.rotation { line += " rotation \(r)" }
            if s.index == videoStream { line += "  [video]" }
            lines.append(line)
        }
        lines.append("video: \(frames) frames, \(structure), \(randomAccessPoints) random-access points"
            + (keyFlagsNotRandomAccess > 0 ? ", \(keyFlagsNotRandomAccess) key flags that are not" : "")
            + (undecodableLeadingPackets > 0 ? ", \(undecodableLeadingPackets) undecodable leading packets" : "")
            + (timedByDecoding > 0 ? ", \(timedByDecoding) without a pts timed by decoding" : ""))
        if let keyframes = forecastKeyframeSeconds, let scenes = sceneChangeSeconds {
            func list(_ values: [Double]) -> String { values.isEmpty ? "none" : values.map { String(format: "%.2f", $0) }.joined(separator: " ") }
            lines.append("scene changes (s): \(list(scenes))" + (sceneAnalysisSeconds > 0 ? String(format: " (decoded in %.2f s)", sceneAnalysisSeconds) : ""))
            lines.append("whole-file IDR frames (s): \(list(keyframes))")
        }
        lines.append("plan: \(segments.count) segments, pre-roll \(preRollPackets) packets (\(String(format: "%.1f", preRollRatio * 100)) % extra decode)"
            + (forecastKeyframeSeconds == nil ? "" : ", \(segments.filter { $0.atForecastKeyframe == false }.count) cuts elsewhere"))
        for s in segments {
            lines.append(String(format: "  %4d  %9.3f - %9.3f s  %5d frames  %5d packets  pre-roll %4d  from %@",
                                s.index, s.startSeconds, s.endSeconds, s.frames, s.packets, s.preRollPackets, s.entry)
                + (s.encoderThreads.map { "  \($0) threads" } ?? ""))
        }
        if let packets {
            lines.append("packets (decode order): index pts dts duration key random-access size")
            for p in packets {
                lines.append("  \(p.index) \(p.pts.map(String.init) ?? "-") \(p.dts.map(String.init) ?? "-") \(p.duration) \(p.key ? "K" : "_") \(p.randomAccess) \(p.size)")
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension Double {
    var rounded6: Double { (self * 1_000_000).rounded() / 1_000_000 }
}
