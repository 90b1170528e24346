import FFmpegKit
import Foundation
import S3Kit
import TesseraCore

/// What Tessera learns about an input without decoding it: its streams and every video packet's
/// timestamps, flags and random-access class.
public struct ProbeResult: Sendable {
    public var path: String
    public var formatName: String
    public var durationSeconds: Double?
    public var video: StreamInfo
    public var audio: StreamInfo?
    public var streams: [StreamInfo]
    public var packets: [PacketInfo]
    public var corruptPackets: Int
    /// The file as it was when probed.
    public var stamp: FileStamp?
    /// An object in S3: its size and the ETag it was probed at (nil for a file).
    public var object: S3ObjectInfo?
    /// Scene changes found by decoding (`SceneAnalysis`), once a plan needed them; kept with the probe
    /// so that a coordinator given this probe does not look again.
    public var decodedScenes: DecodedScenes?
    /// What that analysis took in the plan that made it, in seconds (0 when it came with the probe).
    public var sceneAnalysisSeconds = 0.0
    /// Frames the scene analysis decoded.
    public var sceneAnalysisFrames = 0

    /// Whether this probe still describes `path`: the same path, and the file's size and modification
    /// time unchanged since.
    public func describes(_ path: String) -> Bool {
        // An object is read pinned at the ETag probed: a replaced one fails the reads instead.
        self.path == path && (object != nil || stamp != nil && stamp == FileStamp(path))
    }
}

/// A file's size and modification time: enough to tell that a probe is of the file as it is now.
public struct FileStamp: Sendable, Hashable {
    var size: Int64
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    public init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}

public enum MediaProbe {
    /// Opens `path`, picks the video (and audio) stream and lists every video packet.
    public static func probe(_ path: String) throws(TesseraError) -> ProbeResult {
        if let location = S3Location(url: path) {
            // HEADed first: a missing or refused object is one line before anything is read.
            let object = try InputSource.head(location)
            guard object.size > 0 else { throw .input(path, "object is empty") }
            var probe = try list(InputSource.open(location, object), path: path, stamp: nil)
            probe.object = object
            return probe
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .input(path, "no such file")
        }
        guard !isDirectory.boolValue else { throw .input(path, "is a directory, not a media file") }
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue,
              size > 0 else {
            throw .input(path, "file is empty")
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw .input(path, "file is not readable") }
        let stamp = FileStamp(path)
        let input: MediaInput
        do {
            input = try MediaInput(path: path)
        } catch {
            let boxes = Verifier.topLevelBoxes(path)
            if boxes.first == "ftyp", !boxes.contains("moov") {
                throw .input(path, "MP4 without a moov box (truncated, or still being written)")
            }
            throw .input(path, "not a media file libavformat can read (\(error.message))")
        }
        return try list(input, path: path, stamp: stamp)
    }

    /// The opened input's streams and every video packet.
    static func list(_ input: MediaInput, path: String, stamp: FileStamp?) throws(TesseraError) -> ProbeResult {
        // libavformat renders text files (ANSI art) as video; nobody means to transcode those.
        guard input.formatName != "tty" else { throw .input(path, "is a text file, not a media file") }
        guard let video = input.bestVideoStream else {
            let kinds = input.streams.map(\.kind.rawValue)
            throw .input(path, kinds.isEmpty ? "has no streams" : "has no video stream (streams: \(kinds.joined(separator: ", ")))")
        }
        guard video.width > 0, video.height > 0 else {
            throw .input(path, "video stream \(video.index) (\(video.codecName)) has no frame size")
        }
        let classifier = RandomAccessClassifier(codecName: video.codecName, intraOnly: video.intraOnly,
                                                extradata: video.parameters.extradata)
        var packets: [PacketInfo] = []
        var corrupt = 0
        let packet = Packet()
        // Where every stream's packets start and end, for a Matroska file whose header gives its duration (below).
        let declared = input.formatName.hasPrefix("matroska") ? input.durationSeconds : nil
        let timeBases = Dictionary(input.streams.map { ($0.index, $0.timeBase) }, uniquingKeysWith: { a, _ in a })
        var span = (first: Double.infinity, end: -Double.infinity)
        do {
            while try input.read(into: packet) {
                if declared != nil, let t = packet.pts ?? packet.dts, let tb = timeBases[packet.streamIndex] {
                    span = (min(span.first, tb.seconds(t)), max(span.end, tb.seconds(t + max(0, packet.duration))))
                }
                guard packet.streamIndex == video.index else { continue }
                if packet.isCorrupt { corrupt += 1 }
                let access = packet.withData { classifier.classify($0, keyFlag: packet.isKey) }
                packets.append(PacketInfo(index: packets.count, pts: packet.pts, dts: packet.dts,
                                          duration: packet.duration, keyFlag: packet.isKey,
                                          discard: packet.isDiscard, size: packet.size, randomAccess: access,
                                          position: packet.position))
            }
        } catch {
            if let failure = TesseraError.sourceFailure(input) { throw failure }
            throw .input(path, "read error after \(packets.count) video packets (\(error.message))")
        }
        guard !packets.isEmpty else { throw .input(path, "video stream has no packets (truncated file?)") }
        // Pictures without a pts (MPEG program streams, AVI, raw elementary streams) are timed by the order a decoder
        // shows them in, from the decode times, the pictures around them that have one, or (a raw stream has neither)
        // the frame rate.
        let step = Self.frameStep(packets, video)
        if packets.contains(where: { $0.pts == nil && !$0.discard }),
           packets.allSatisfy({ $0.dts != nil }) || packets.contains(where: { $0.pts != nil }) || step != nil {
            let order: [Int]
            do {
                order = try DisplayOrder.decode(input, stream: video.index, packets: packets.count)
            } catch {
                throw .input(path, "cannot decode the video to time its pictures without timestamps (\(error.message))")
            }
            do {
                packets = try PresentationTimes.fill(packets, displayOrder: order, step: step)
            } catch {
                throw .input(path, error.description)
            }
        }
        // An MP4 or QuickTime file cut short after its index (a faststart upload that stopped): the index lists
        // samples past the file's end. (Its last samples would be read short or not at all.)
        if input.formatName.hasPrefix("mov,"), let size = stamp?.size, let end = input.indexedEnd, end > size {
            throw .input(path, "cut short: its index lists media up to byte \(end), the file ends at byte \(size) (an upload that stopped?)")
        }
        // A Matroska or WebM file cut short: its header gives the whole duration (one written live gives none), its
        // packets end well before (counted from 0 or from the first, whichever is longer: muxers differ).
        let covered = max(span.end, span.end - span.first)
        if let declared, span.end > span.first,
           declared - covered > max(1, declared * 0.02) {
            throw .input(path, String(format: "cut short: its header says %.2f s, its media ends after %.2f s (an upload that stopped?)",
                                      declared, covered))
        }
        return ProbeResult(path: path, formatName: input.formatName, durationSeconds: input.durationSeconds,
                           video: video, audio: input.bestAudioStream, streams: input.streams,
                           packets: packets, corruptPackets: corrupt, stamp: stamp)
    }

    /// A frame's length in the stream's time base when no packet has a timestamp (a raw elementary stream): the
    /// demuxer's packet duration (from the stream's timing or its default rate), else the frame rate; nil otherwise.
    static func frameStep(_ packets: [PacketInfo], _ video: StreamInfo) -> Int64? {
        guard packets.allSatisfy({ $0.pts == nil && $0.dts == nil }) else { return nil }
        let durations = packets.map(\.duration).filter { $0 > 0 }.sorted()
        if !durations.isEmpty { return durations[durations.count / 2] }
        let tb = video.timeBase
        guard tb.isValid else { return nil }
        for rate in [video.averageFrameRate, video.realFrameRate] where rate.isValid {
            let step = (Int64(rate.den) * Int64(tb.den)) / (Int64(rate.num) * Int64(tb.num))
            if step > 0 { return step }
        }
        return nil
    }
}
