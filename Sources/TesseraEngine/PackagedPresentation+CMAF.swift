import Foundation
import TesseraCore

/// One video rung as the CMAF writer left it: its rendition and the stream it was written from (size, frame rate,
/// aspect, SPS/PPS), and the AAC muxed into its segments when the rendition carries audio too.
public struct CMAFRung: Sendable {
    /// The rung's id in the playlists and the manifest, e.g. "720p".
    public var name: String
    public var rendition: CMAFRendition
    public var video: CMAFWriter.Video
    /// The muxed AAC's codec parameters (its AudioSpecificConfig); needed when `rendition.content` is `.videoAndAudio`.
    public var muxedAudio: CodecParameters?

    public init(name: String, rendition: CMAFRendition, video: CMAFWriter.Video, muxedAudio: CodecParameters? = nil) {
        self.name = name
        self.rendition = rendition
        self.video = video
        self.muxedAudio = muxedAudio
    }
}

extension PackagedPresentation {
    /// The manifest model of CMAF renditions written under `root` (the folder the playlists and the MPD go to): each
    /// rendition's folder relative to it, its exact segment timing in the files' timescale, its codec headers.
    public init(cmafRungs rungs: [CMAFRung], audio: CMAFRendition? = nil, audioParameters: CodecParameters? = nil,
                audioName: String = "main", language: String? = nil, root: String) throws(StreamingPackageError) {
        var video: [VideoRendition] = []
        for rung in rungs {
            let label = "rung \(rung.name)"
            let parameters = rung.video.parameters
            // HEVC's hvcC or VPS/SPS and AV1's av1C or sequence header are read as they come.
            guard let codec = VideoCodec(rawValue: parameters.codecName) else {
                throw StreamingPackageError(.codecConfiguration, "\(label): \(parameters.codecName) video is not H.264, HEVC or AV1")
            }
            let sar = parameters.sampleAspectRatio.isValid ? parameters.sampleAspectRatio : Rational(1, 1)
            guard let frameRate = rung.video.frameRate, frameRate.isValid else {
                throw StreamingPackageError(.layout, "\(label) has no frame rate")
            }
            var muxed: AudioFormat?
            if rung.rendition.content == .videoAndAudio {
                guard let audioParameters = rung.muxedAudio else { throw StreamingPackageError(.layout, "\(label) carries audio of unknown format") }
                muxed = try Self.format(audioParameters, label: label)
            }
            video.append(VideoRendition(
                name: rung.name, directory: try Self.folder(rung.rendition.directory, under: root, label: label),
                width: Int(parameters.width), height: Int(parameters.height), frameRate: frameRate, sampleAspectRatio: sar,
                decoderConfiguration: codec == .h264 ? try Self.avcConfiguration(parameters.extradata, label: label) : parameters.extradata,
                muxedAudio: muxed, track: try Self.track(rung.rendition, label: label), codec: codec))
        }
        var audioRendition: AudioRendition?
        if let audio {
            guard let audioParameters else { throw StreamingPackageError(.layout, "the audio rendition comes without its codec parameters") }
            let label = "audio \(audioName)"
            audioRendition = AudioRendition(name: audioName, language: language, directory: try Self.folder(audio.directory, under: root, label: label),
                                            format: try Self.format(audioParameters, label: label), track: try Self.track(audio, label: label))
        }
        self.init(video: video, audio: audioRendition)
    }

    /// The rendition's files and timing. The writer's tick counts are already on the common timeline and in the track's
    /// own timescale, so they go over as they are; the first segment's start is the track's earliest presentation time
    /// (for B-frame video, its decode delay, not 0), which DASH `S@t` and the files agree on.
    static func track(_ rendition: CMAFRendition, label: String) throws(StreamingPackageError) -> MediaTrack {
        guard rendition.timeBase.num == 1, rendition.timeBase.den > 0 else {
            throw StreamingPackageError(.layout, "\(label): time base \(rendition.timeBase) is not 1/timescale")
        }
        let naming = SegmentNaming()
        var segments: [MediaSegment] = []
        for (index, segment) in rendition.segments.enumerated() {
            guard segment.file == naming.fileName(index) else {
                throw StreamingPackageError(.layout, "\(label): segment \(index + 1) is \(segment.file), not \(naming.fileName(index))")
            }
            // One S@t for the whole SegmentTimeline (and EXTINF sums) assume each segment ends where the next starts.
            let previous = index > 0 ? rendition.segments[index - 1] : nil
            if let previous, previous.startTicks + previous.durationTicks != segment.startTicks {
                throw StreamingPackageError(.layout, "\(label): \(segment.file) starts at tick \(segment.startTicks), "
                                            + "\(previous.file) ends at \(previous.startTicks + previous.durationTicks)")
            }
            // The writer refuses a video segment that does not open on an IDR; audio segments always open on a frame.
            segments.append(MediaSegment(duration: segment.durationTicks, byteSize: Int64(segment.bytes), startsWithIDR: true,
                                         iFrame: segment.iFrame))
        }
        guard let first = rendition.segments.first else { throw StreamingPackageError(.layout, "\(label) has no segment") }
        return MediaTrack(timescale: Int64(rendition.timeBase.den), startTicks: first.startTicks, initialization: rendition.initSegment,
                          naming: naming, segments: segments)
    }

    /// `directory` relative to `root`, which must hold it.
    static func folder(_ directory: String, under root: String, label: String) throws(StreamingPackageError) -> String {
        let base = URL(fileURLWithPath: root).standardizedFileURL.path
        let path = URL(fileURLWithPath: directory).standardizedFileURL.path
        guard path.hasPrefix(base + "/"), path.count > base.count + 1 else {
            throw StreamingPackageError(.layout, "\(label): folder \(directory) is not inside \(root)")
        }
        return String(path.dropFirst(base.count + 1))
    }

    /// What `CodecString.avc` reads: the avcC record as it is (what the mp4 demuxer gives), or the first SPS of Annex B
    /// extradata (what libx264 gives with a global header; movenc builds the avcC from it).
    static func avcConfiguration(_ extradata: [UInt8], label: String) throws(StreamingPackageError) -> [UInt8] {
        if extradata.first == 1 { return extradata }
        var units: [ArraySlice<UInt8>] = []
        var start: Int?
        var i = 0
        while i + 3 <= extradata.count {
            if extradata[i] == 0, extradata[i + 1] == 0, extradata[i + 2] == 1 {
                if let start { units.append(extradata[start..<Self.trimZeros(extradata, end: i, floor: start)]) }
                i += 3
                start = i
            } else {
                i += 1
            }
        }
        if let start { units.append(extradata[start...]) }
        guard let sps = units.first(where: { $0.first.map { $0 & 0x1F == 7 } ?? false }) else {
            throw StreamingPackageError(.codecConfiguration, "\(label): the video's extradata holds neither an avcC record nor an SPS")
        }
        return Array(sps)
    }

    /// The end of a NAL unit before a start code: trailing zero bytes belong to the next (four-byte) start code.
    private static func trimZeros(_ bytes: [UInt8], end: Int, floor: Int) -> Int {
        var end = end
        while end > floor, bytes[end - 1] == 0 { end -= 1 }
        return end
    }

    /// The AAC format from its AudioSpecificConfig.
    static func format(_ parameters: CodecParameters, label: String) throws(StreamingPackageError) -> AudioFormat {
        do throws(PackagingError) { return try AudioFormat(audioSpecificConfig: parameters.extradata) } catch {
            throw StreamingPackageError(.codecConfiguration, "\(label): \(error.description)")
        }
    }
}
