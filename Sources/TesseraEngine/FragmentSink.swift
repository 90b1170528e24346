import FFmpegKit
import Foundation
import TesseraCore

/// One fragmenting mp4 muxer in memory and the folder its pieces go to: the init segment on creation, then one
/// media segment file per `cut`, each read back (moof present, `tfdt` continuing the previous fragment's end).
final class FragmentSink {
    struct Track {
        var parameters: CodecParameters
        var timeBase: Rational
        var frameRate: Rational?
        var displayMatrix: [Int32]?
    }

    let directory: String
    let tracks: [Track]
    private let output: MediaOutput
    private var streams: [Int] = []
    private(set) var initBytes = 0
    /// Per track id: where the next fragment's decode time must start.
    private var nextDecodeTime: [UInt32: UInt64] = [:]

    init(directory: String, tracks: [Track]) throws(CMAFError) {
        self.directory = directory
        self.tracks = tracks
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CMAFError(.writing, directory, "cannot create the folder (\(error.localizedDescription))")
        }
        do {
            output = try MediaOutput(inMemory: "mp4")
            for track in tracks {
                let stream = try output.addStream(parameters: track.parameters, timeBase: track.timeBase, frameRate: track.frameRate)
                if let matrix = track.displayMatrix { try output.setDisplayMatrix(matrix, stream: stream) }
                streams.append(stream)
            }
            try output.writeHeader(options: [("movflags", CMAFWriter.movflags), ("use_editlist", "0"),
                                               ("avoid_negative_ts", "disabled")])
            let bytes = try output.takeBytes()
            initBytes = bytes.count
            try save(bytes, as: CMAFWriter.initName)
        } catch let error as CMAFError {
            throw error
        } catch {
            throw CMAFError(.muxing, directory, "cannot start the fragmented MP4 (\(error))")
        }
    }

    /// The time base the muxer chose for a track (what the files' timestamps count).
    func timeBase(of track: Int) -> Rational { output.timeBase(of: streams[track]) }

    /// Adds a packet (timestamps in the track's given time base) to the fragment being built.
    func write(_ media: MediaPacket, track: Int) throws(CMAFError) {
        do {
            try output.writeNow(try Packet(media), stream: streams[track], timeBase: tracks[track].timeBase)
        } catch {
            throw CMAFError(.muxing, directory, "packet at pts \(media.pts ?? -1) refused (\(error))")
        }
    }

    /// Ends the fragment as media segment `index`: writes its file and returns its name, size and layout.
    func cut(_ index: Int) throws(CMAFError) -> (file: String, bytes: Int, layout: FragmentLayout) {
        let name = CMAFWriter.segmentName(index)
        let bytes: [UInt8]
        do {
            try output.flushFragment()
            bytes = try output.takeBytes()
        } catch {
            throw CMAFError(.muxing, name, "cannot end the fragment (\(error))")
        }
        guard let layout = FragmentLayout.parse(bytes), layout.boxes.contains("mdat"), !layout.tracks.isEmpty else {
            throw CMAFError(.malformedSegment, name, "is not one moof and mdat (boxes: \(FragmentLayout.parse(bytes)?.boxes ?? []))")
        }
        for track in layout.tracks {
            guard let start = track.baseDecodeTime, let duration = track.duration else {
                throw CMAFError(.malformedSegment, name, "track \(track.trackID) has no decode time or sample durations")
            }
            if let expected = nextDecodeTime[track.trackID], expected != start {
                throw CMAFError(.malformedSegment, name, "track \(track.trackID) starts decoding at \(start), the previous segment ended at \(expected)")
            }
            nextDecodeTime[track.trackID] = start + UInt64(duration)
        }
        try save(bytes, as: name)
        return (name, bytes.count, layout)
    }

    /// Ends the muxer (its trailer is not part of any segment).
    func finish() throws(CMAFError) {
        do { try output.finish() } catch { throw CMAFError(.muxing, directory, "cannot end the fragmented MP4 (\(error))") }
    }

    private func save(_ bytes: [UInt8], as name: String) throws(CMAFError) {
        let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
        do { try Data(bytes).write(to: url) } catch {
            throw CMAFError(.writing, url.path, "cannot write (\(error.localizedDescription))")
        }
    }
}
