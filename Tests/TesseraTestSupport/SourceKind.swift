import Testing
import TesseraCore
import TesseraEngine

/// The inputs the engine must cut frame-exactly, each made by ffmpeg.
package enum SourceKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case closedGOPWithBFrames
    /// `ffmpeg -t 4 -c copy` of the B-frame file: the copy stops in decode order, so the P-frame after the last
    /// keyframe stays and the B-frames shown before it go, leaving a gap before the last picture.
    case trimmedByStreamCopy
    /// `ffmpeg -ss 1.3 -t 3 -c copy` of it: an edit list hides the frames before 1.3 s as well.
    case startTrimmedByStreamCopy
    case openGOP
    case hevc
    case mpegTSWithStartOffset
    case variableFrameRate
    case singleKeyframe
    case prores
    case fullRangeH264
    case fullRangeMJPEG
    /// An MPEG program stream with B-frames (DVD, camcorders): the demuxer gives no pts to a fifth of the pictures.
    case mpegProgramStream
    /// H.264 with B-frames in AVI: no picture has a pts, only the index's decode times.
    case aviWithoutPTS
    /// A raw H.264 elementary stream with B-frames (`-f h264`): no timestamps at all, nothing to seek by.
    case rawH264
    /// A raw MPEG-4 Part 2 stream with B-frames: its parser makes the timestamps up as it reads, and seeking by
    /// them fails.
    case rawMPEG4

    package var testDescription: String { rawValue }

    package var hasAudio: Bool { ![.variableFrameRate, .fullRangeH264, .fullRangeMJPEG, .rawH264, .rawMPEG4].contains(self) }

    /// An elementary stream without a container: its packets are the file, one after another.
    package var isRawStream: Bool { [.rawH264, .rawMPEG4].contains(self) }

    package func make() throws -> String {
        let l = Fixtures.lavfi
        switch self {
        case .closedGOPWithBFrames:
            return try Fixtures.media("closed.mp4", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3", "-c:a", "aac"])
        case .trimmedByStreamCopy:
            return try Fixtures.media("trimmed.mp4", ["-i", try SourceKind.closedGOPWithBFrames.make(), "-t", "4", "-c", "copy"])
        case .startTrimmedByStreamCopy:
            return try Fixtures.media("start-trimmed.mp4", ["-ss", "1.3", "-i", try SourceKind.closedGOPWithBFrames.make(), "-t", "3", "-c", "copy"])
        case .openGOP:
            return try Fixtures.media("open.mp4", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3",
                                                      "-x264-params", "open-gop=1:b-pyramid=normal", "-c:a", "aac"])
        case .hevc:
            return try Fixtures.media("hevc.mp4", l + ["-t", "6", "-c:v", "libx265", "-preset", "ultrafast",
                                                      "-x265-params", "keyint=25:open-gop=1:log-level=error", "-c:a", "aac"])
        case .mpegTSWithStartOffset:
            return try Fixtures.media("offset.ts", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25",
                                                       "-c:a", "aac", "-output_ts_offset", "10", "-f", "mpegts"])
        case .variableFrameRate:
            return try Fixtures.media("vfr.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "6",
                                                  "-vf", "select='not(mod(n\\,3))+gte(n\\,60)'", "-fps_mode", "vfr",
                                                  "-c:v", "libx264", "-preset", "veryfast", "-g", "25"])
        case .singleKeyframe:
            return try Fixtures.media("single-idr.mp4", l + ["-t", "8", "-c:v", "libx264", "-preset", "veryfast", "-g", "1000",
                                                            "-keyint_min", "1000", "-sc_threshold", "0", "-c:a", "aac"])
        case .prores:
            return try Fixtures.media("prores.mov", l + ["-t", "4", "-c:v", "prores_ks", "-profile:v", "2", "-c:a", "pcm_s16le"])
        case .fullRangeH264:
            // Phones record full-range H.264; it must not come out washed out.
            return try Fixtures.media("full-range.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "3",
                                                         "-pix_fmt", "yuvj420p", "-c:v", "libx264", "-preset", "veryfast", "-g", "25"])
        case .mpegProgramStream:
            return try Fixtures.media("program.mpg", l + ["-t", "6", "-c:v", "mpeg2video", "-bf", "2", "-g", "12", "-q:v", "3",
                                                         "-c:a", "mp2", "-f", "mpeg"])
        case .aviWithoutPTS:
            return try Fixtures.media("b-frames.avi", l + ["-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-bf", "3",
                                                          "-c:a", "libmp3lame"])
        case .rawH264:
            return try Fixtures.media("raw.h264", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "6", "-c:v", "libx264",
                                                   "-preset", "veryfast", "-g", "25", "-bf", "3", "-f", "h264"])
        case .rawMPEG4:
            return try Fixtures.media("raw-mpeg4.m4v", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "6", "-c:v", "mpeg4",
                                                        "-bf", "2", "-g", "25", "-q:v", "3", "-f", "m4v"])
        case .fullRangeMJPEG:
            return try Fixtures.media("mjpeg.mov", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "3",
                                                    "-pix_fmt", "yuvj422p", "-c:v", "mjpeg", "-q:v", "3"])
        }
    }
}

package func quickOptions(segmentSeconds: Double = 1, workers: Int = 2) -> JobOptions {
    JobOptions(settings: EncoderSettings(preset: "veryfast"), segmentSeconds: segmentSeconds, workers: workers)
}

extension Fixtures {
    /// 4 s of clean testsrc2, then 4 s of it under temporal noise: complexity changes sharply mid-file.
    package static func cleanThenNoisy() throws -> String {
        let src = "testsrc2=size=480x270:rate=25:duration=4"
        return try Fixtures.media("clean-then-noisy.mp4", ["-f", "lavfi", "-i", src, "-f", "lavfi", "-i", src, "-filter_complex",
                                                            "[1:v]noise=alls=20:allf=t[n];[0:v][n]concat=n=2:v=1[v]", "-map", "[v]",
                                                            "-c:v", "libx264", "-preset", "ultrafast", "-qp", "4", "-g", "50"])
    }
}
