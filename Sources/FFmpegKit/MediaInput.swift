import CFFmpeg
import CTesseraShim
import TesseraCore

/// What a demuxed stream is, read without decoding it.
public struct StreamInfo: Sendable {
    public enum Kind: String, Sendable { case video, audio, subtitle, data, other }

    public var index: Int
    /// The container's own number for it (an MPEG-TS stream's PID, a Matroska track's number).
    public var containerID: Int
    public var kind: Kind
    public var codecName: String
    public var timeBase: Rational
    public var averageFrameRate: Rational
    public var realFrameRate: Rational
    /// In the stream's time base.
    public var startTime: Int64?
    public var duration: Int64?
    public var frameCountHint: Int
    public var width: Int
    public var height: Int
    public var pixelFormat: String?
    public var sampleRate: Int
    public var channels: Int
    public var bitRate: Int64
    public var intraOnly: Bool
    /// Display rotation, counter-clockwise degrees, when the stream carries a display matrix.
    public var rotation: Double?
    /// The display matrix itself (9 entries), when the stream carries one.
    public var displayMatrix: [Int32]?
    public var parameters: CodecParameters
    /// Attached pictures (cover art) are video streams that are not the video.
    public var isAttachedPicture: Bool
}

/// An opened input file (libavformat demuxer).
public final class MediaInput {
    var context: UnsafeMutablePointer<AVFormatContext>?
    public let path: String
    public let streams: [StreamInfo]
    public let formatName: String
    /// The custom I/O a non-file input is read through; closed after the demuxer.
    let io: SourceIO?
    /// What stopped a read of a non-file input (an object replaced in S3), kept for the caller to report.
    public var sourceFailure: (any Error)? { io?.failure }

    /// Demuxers whose header gives every packet's timing (MP4 and QuickTime sample tables): opened again,
    /// their packets read the same without libavformat's search for stream information. Others (Matroska,
    /// MPEG-TS) learn decode timestamps and more in that search.
    static let headerTimed: Set<String> = ["mov,mp4,m4a,3gp,3g2,mj2"]

    /// Opens `path`. With `probedStreams` (the streams a probe of this file found), the header of a
    /// `headerTimed` file that names that many streams, each with its codec, is taken as it is:
    /// libavformat's search for stream information decodes frames (milliseconds a file) to learn what the
    /// probe knows already.
    public convenience init(path: String, probedStreams: Int? = nil) throws(FFmpegError) {
        try self.init(path: path, io: nil, probedStreams: probedStreams)
    }

    /// Opens the bytes of `source` through a custom AVIOContext (an object in S3); `name` stands for it in errors.
    /// `sequential`: read in file order only, as from a pipe (bytes that arrive as they are written).
    /// `searchesStreams`: false reads the header only, never libavformat's search for stream information (packets
    /// only are wanted, their decoding parameters known from elsewhere).
    public convenience init(source: any RandomAccessBytes, name: String, probedStreams: Int? = nil, sequential: Bool = false,
                            searchesStreams: Bool = true) throws(FFmpegError) {
        try self.init(path: name, io: SourceIO(source, sequential: sequential), probedStreams: probedStreams, searchesStreams: searchesStreams)
    }

    init(path: String, io: SourceIO?, probedStreams: Int?, searchesStreams: Bool = true) throws(FFmpegError) {
        self.path = path
        self.io = io
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        if let io {
            ctx = avformat_alloc_context()
            ctx?.pointee.pb = io.context
            ctx?.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        do {
            try check(avformat_open_input(&ctx, io == nil ? path : "", nil, nil), "avformat_open_input")
        } catch {
            throw io?.failure.map { FFmpegError(String(describing: $0), call: "avformat_open_input") } ?? error
        }
        guard let opened = ctx else { throw FFmpegError("no demuxer context", call: "avformat_open_input") }
        context = opened
        let format = cString(opened.pointee.iformat.pointee.name) ?? "unknown"
        do {
            let described = probedStreams == Int(opened.pointee.nb_streams) && Self.headerTimed.contains(format)
                && (0..<Int(opened.pointee.nb_streams)).allSatisfy {
                let par = opened.pointee.streams[$0]!.pointee.codecpar.pointee
                return par.codec_id != AV_CODEC_ID_NONE && (par.codec_type != AVMEDIA_TYPE_VIDEO || par.width > 0 && par.height > 0)
            }
            if !described, searchesStreams { try check(avformat_find_stream_info(opened, nil), "avformat_find_stream_info") }
        } catch {
            avformat_close_input(&ctx)
            context = nil
            throw io?.failure.map { FFmpegError(String(describing: $0), call: "avformat_find_stream_info") } ?? error
        }
        formatName = format
        var infos: [StreamInfo] = []
        for i in 0..<Int(opened.pointee.nb_streams) {
            infos.append(Self.describe(opened.pointee.streams[i]!))
        }
        streams = infos
    }

    deinit {
        if context != nil { avformat_close_input(&context) }
    }

    /// Container duration in seconds, when known.
    public var durationSeconds: Double? {
        guard let ctx = context, ctx.pointee.duration != FFmpeg.noPTS, ctx.pointee.duration > 0 else { return nil }
        return Double(ctx.pointee.duration) / Double(tessera_time_base())
    }

    /// The byte after the last sample the demuxer's index lists, over every stream (an MP4's sample tables); nil
    /// when it keeps none.
    public var indexedEnd: Int64? {
        guard let context else { return nil }
        var end: Int64?
        for i in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[i] else { continue }
            let count = avformat_index_get_entries_count(stream)
            guard count > 0, let entry = avformat_index_get_entry(stream, count - 1), entry.pointee.pos >= 0 else { continue }
            end = max(end ?? 0, entry.pointee.pos + Int64(entry.pointee.size))
        }
        return end
    }

    /// The main video stream (not cover art), as FFmpeg would choose it.
    public var bestVideoStream: StreamInfo? { bestStream(kind: .video) }
    public var bestAudioStream: StreamInfo? { bestStream(kind: .audio) }

    func bestStream(kind: StreamInfo.Kind) -> StreamInfo? {
        let type = kind == .video ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        if index >= 0, !streams[Int(index)].isAttachedPicture { return streams[Int(index)] }
        return streams.first { $0.kind == kind && !$0.isAttachedPicture }
    }

    /// Reads the next packet of any stream into `packet`; false at end of file.
    public func read(into packet: Packet) throws(FFmpegError) -> Bool {
        packet.unref()
        let result = av_read_frame(context, packet.raw)
        if let failure = io?.failure { throw FFmpegError(String(describing: failure), call: "av_read_frame") }
        if result == tessera_averror_eof() { return false }
        try check(result, "av_read_frame")
        return true
    }

    /// Reads only `stream`'s packets from now on (the others are discarded, and demuxers that fetch streams
    /// separately, such as DASH's, stop fetching them).
    public func readOnly(stream: Int) {
        guard let context else { return }
        for i in 0..<Int(context.pointee.nb_streams) {
            context.pointee.streams[i]?.pointee.discard = i == stream ? AVDISCARD_DEFAULT : AVDISCARD_ALL
        }
    }

    /// Seeks so that the next packets of `stream` start at or before `timestamp` (in its time base).
    /// Demuxers differ in precision; callers must check where they landed.
    public func seek(stream: Int, toOrBefore timestamp: Int64) throws(FFmpegError) {
        try check(av_seek_frame(context, Int32(stream), timestamp, AVSEEK_FLAG_BACKWARD), "av_seek_frame")
    }

    /// Seeks to byte `position` of the input, for containers that resynchronise anywhere (MPEG-TS); callers must
    /// check which packets come next.
    public func seek(toByte position: Int64) throws(FFmpegError) {
        try check(av_seek_frame(context, -1, position, AVSEEK_FLAG_BYTE), "av_seek_frame")
    }

    /// Back to the first packet.
    public func seekToStart() throws(FFmpegError) {
        if av_seek_frame(context, -1, Int64.min, AVSEEK_FLAG_BACKWARD) < 0 {
            try check(avformat_seek_file(context, -1, Int64.min, Int64.min, 0, AVSEEK_FLAG_BYTE), "avformat_seek_file")
        }
    }

    static func describe(_ stream: UnsafeMutablePointer<AVStream>) -> StreamInfo {
        let par = stream.pointee.codecpar!
        let kind: StreamInfo.Kind
        switch par.pointee.codec_type {
        case AVMEDIA_TYPE_VIDEO: kind = .video
        case AVMEDIA_TYPE_AUDIO: kind = .audio
        case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
        case AVMEDIA_TYPE_DATA: kind = .data
        default: kind = .other
        }
        let rotation = tessera_stream_rotation(stream)
        var matrix = [Int32](repeating: 0, count: 9)
        let hasMatrix = tessera_stream_display_matrix(stream, &matrix) == 1
        let pixelFormat = kind == .video ? cString(av_get_pix_fmt_name(AVPixelFormat(par.pointee.format))) : nil
        return StreamInfo(
            index: Int(stream.pointee.index),
            containerID: Int(stream.pointee.id),
            kind: kind,
            codecName: cString(avcodec_get_name(par.pointee.codec_id)) ?? "unknown",
            timeBase: stream.pointee.time_base.rational,
            averageFrameRate: stream.pointee.avg_frame_rate.rational,
            realFrameRate: stream.pointee.r_frame_rate.rational,
            startTime: stream.pointee.start_time.optionalTimestamp,
            duration: stream.pointee.duration.optionalTimestamp,
            frameCountHint: Int(stream.pointee.nb_frames),
            width: Int(par.pointee.width),
            height: Int(par.pointee.height),
            pixelFormat: pixelFormat,
            sampleRate: Int(par.pointee.sample_rate),
            channels: Int(tessera_codecpar_channels(par)),
            bitRate: par.pointee.bit_rate,
            intraOnly: tessera_codec_is_intra_only(Int32(bitPattern: par.pointee.codec_id.rawValue)) != 0,
            rotation: rotation.isNaN ? nil : rotation,
            displayMatrix: hasMatrix ? matrix : nil,
            parameters: CodecParameters(par.pointee),
            isAttachedPicture: stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0)
    }
}
