import Testing
@testable import TesseraCore

/// ffmpeg's words on Tessera's command line: the exact hints, `-y` moved after the command, mistyped commands.
struct FFmpegHabitsTests {
    static let commands = ["transcode", "probe", "sample", "submit", "status", "list", "prune"]

    func review(_ line: String) -> FFmpegHabits.Review {
        FFmpegHabits.review(line.split(separator: " ").map(String.init), commands: Self.commands)
    }

    @Test(arguments: [
        ("transcode -i in.mp4 -o out.mp4", "-i is ffmpeg's option: give the input first, without -i: tessera transcode in.mp4 -o OUTPUT"),
        ("-i in.mp4 out.mp4", "-i is ffmpeg's option: give the input first, without -i: tessera transcode in.mp4 -o OUTPUT"),
        ("submit -i in.mp4 -o out.mp4", "-i is ffmpeg's option: give the input first, without -i: tessera submit in.mp4 -o OUTPUT"),
        ("transcode in.mp4 -o out.mp4 -c:v libx264", "-c:v is ffmpeg's option: use --codec h264"),
        ("transcode in.mp4 -o out.mp4 -c:a copy", "-c:a is ffmpeg's option: use --audio copy"),
        ("transcode in.mp4 -o out.mp4 -c:a libopus", "-c:a is ffmpeg's option: use --audio aac, --audio copy or --audio none"),
        ("transcode in.mp4 -o out.mp4 -an", "-an is ffmpeg's option: use --audio none"),
        ("transcode in.mp4 -b:v 2M -o out.mp4", "-b:v is ffmpeg's option: use --bitrate 2M"),
        ("transcode in.mp4 -o out.mp4 -b:v", "-b:v is ffmpeg's option: use --bitrate RATE"),
        ("transcode in.mp4 -o out.mp4 -crf 20", "-crf is ffmpeg's option: use --crf 20"),
        ("transcode in.mp4 -o out.mp4 -preset slow", "-preset is ffmpeg's option: use --preset slow"),
        ("transcode in.mp4 -o out.mp4 -r 30", "-r is ffmpeg's option: use --fps 30"),
        ("transcode in.mp4 -o out.mp4 -s 1280x720", "-s is ffmpeg's option: use --size 1280x720"),
        ("transcode in.mp4 -o out.mp4 -ac 2", "-ac is ffmpeg's option: use --audio-channels 2"),
        ("transcode in.mp4 -o out.mp4 -ar 48000", "-ar is ffmpeg's option: use --audio-rate 48000"),
        ("transcode in.mp4 -o out.mp4 -b:a 128k", "-b:a is ffmpeg's option: use --audio-bitrate 128k"),
        ("transcode in.mp4 -o out.mp4 -movflags +faststart", "-movflags is ffmpeg's option: Tessera always writes faststart MP4: leave it out"),
        ("transcode in.mp4 -o out.mp4 -vf scale=1280:720", "-vf is ffmpeg's option: use --size 1280x720"),
        ("transcode in.mp4 -o out.mp4 -vf scale=w=1280:h=720,fps=30", "-vf is ffmpeg's option: use --size 1280x720 --fps 30"),
        ("transcode in.mp4 -o out.mp4 -vf hflip,transpose=1", "-vf is ffmpeg's option: use --mirror horizontal --rotate 90"),
        ("transcode in.mp4 -o out.mp4 -vf scale=1280:-2",
         "-vf is ffmpeg's option: use --size WxH (exact) or --max-size WxH (fits inside, keeping the aspect ratio)"),
        ("transcode in.mp4 -o out.mp4 -vf yadif", "-vf is ffmpeg's option: Tessera takes no filter graph: use --size, --max-size, --fps, --rotate or --mirror"),
        ("transcode in.mp4 -o out.mp4 -g 60", "-g is ffmpeg's option: use --keyint 60"),
        ("transcode in.mp4 -o out.mp4 -maxrate 3M", "-maxrate is ffmpeg's option: use --maxrate 3M"),
        ("transcode in.mp4 -o out.mp4 -threads 2", "-threads is ffmpeg's option: use --threads 2 (libx264 threads per encoder)"),
        ("transcode -hide_banner in.mp4 -o out.mp4", "-hide_banner is ffmpeg's option: Tessera prints no banner and shows progress only on a terminal: leave it out"),
        ("transcode in.mp4 -ss 10 -o out.mp4",
         "-ss is ffmpeg's option: trimming is not supported: cut the input first (ffmpeg -ss START -t DURATION -i IN -c copy CUT.mp4), then transcode the cut"),
        ("transcode in.mp4 -o out.mp4 -t 5",
         "-t is ffmpeg's option: trimming is not supported: cut the input first (ffmpeg -ss START -t DURATION -i IN -c copy CUT.mp4), then transcode the cut"),
        ("transcode in.mp4 -o out.mp4 -tune film", "-tune is ffmpeg's option: Tessera has no --tune: leave it out"),
        ("transcode in.mp4 -o out.mp4 -loglevel error", "-loglevel is ffmpeg's option: use --verbose for more, or leave it out (errors are one line)"),
        ("transcode -nostdin in.mp4 -o out.mp4", "-nostdin is ffmpeg's option: Tessera never reads standard input: leave it out"),
        ("transcode in.mp4 -o out.mp4 -map 0:a:1",
         "-map is ffmpeg's option: Tessera takes the main video stream and one audio stream: choose it with --audio-track N"),
        ("transcode in.mp4 -o out.mp4 -hwhatever", "-hwhatever is not an option: Tessera's are spelled with two dashes (tessera transcode --help)"),
        ("submit in.mp4 -o out.mp4 -priority 5", "-priority is not an option: Tessera's are spelled with two dashes (tessera submit --help)"),
        ("trancode in.mp4 -o out.mp4", "unknown command 'trancode'; did you mean 'transcode'?"),
        ("prob in.mp4", "unknown command 'prob'; did you mean 'probe'?"),
        ("encode in.mp4", "unknown command 'encode'; the commands are transcode, probe, sample, submit, status, list, prune"),
    ])
    func hint(_ line: String, _ message: String) {
        #expect(review(line) == .refuse(message))
    }

    @Test(arguments: [
        ("-y transcode in.mp4 -o out.mp4", "transcode -y in.mp4 -o out.mp4"),
        ("-y -n submit in.mp4 -o out.mp4", "submit -y -n in.mp4 -o out.mp4"),
        ("transcode in.mp4 -o out.mp4 -y", "transcode in.mp4 -o out.mp4 -y"),
        ("transcode in.mp4 -o out.mp4 --crf 20 -v", "transcode in.mp4 -o out.mp4 --crf 20 -v"),
        // After --, everything is an argument.
        ("transcode -o out.mp4 -- -i", "transcode -o out.mp4 -- -i"),
        ("help transcode", "help transcode"),
        ("--version", "--version"),
        ("", ""),
    ])
    func proceeds(_ line: String, _ parsed: String) {
        #expect(review(line) == .proceed(parsed.split(separator: " ").map(String.init)))
    }

    @Test(arguments: [
        ("http://127.0.0.1:1/x.mp4", false, "a URL input is not supported: give a file path"),
        ("s3://bucket/key.mov", false, "a URL input is not supported: give a file path"),
        ("-", false, "reading standard input is not supported: give a file path"),
        ("pipe:0", false, "reading standard input is not supported: give a file path"),
        ("-", true, "writing to standard output is not supported: give a file path"),
        ("rtmp://host/live", true, "a URL output is not supported: give a file path"),
    ])
    func notAFile(_ path: String, _ output: Bool, _ problem: String) {
        #expect(FFmpegHabits.notAFile(path, output: output) == problem)
    }

    @Test(arguments: ["in.mp4", "/media/a:b.mov", "./http:/x.mp4", "-in.mp4", "/media/pipe:1.mp4"])
    func filePathsAreFiles(_ path: String) {
        #expect(FFmpegHabits.notAFile(path) == nil)
        #expect(FFmpegHabits.notAFile(path, output: true) == nil)
    }

    @Test func distance() {
        #expect(FFmpegHabits.distance("trancode", "transcode") == 1)
        #expect(FFmpegHabits.distance("", "abc") == 3)
        #expect(FFmpegHabits.distance("kitten", "sitting") == 3)
    }
}
