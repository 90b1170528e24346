/// What ffmpeg users type, read before the command line is parsed: `-y` and `-n` are Tessera's too
/// (moved after the command when given before it), every other ffmpeg option gets a one-line hint naming
/// Tessera's, and a mistyped command is named as one. Tessera never takes an ffmpeg spelling silently.
public enum FFmpegHabits {
    public enum Review: Equatable, Sendable {
        /// Parse these arguments.
        case proceed([String])
        /// Stop with this one-line message (without the `tessera: ` prefix).
        case refuse(String)
    }

    /// Reviews `arguments` (without the program name) for a program whose commands are `commands`.
    public static func review(_ arguments: [String], commands: [String]) -> Review {
        var arguments = arguments
        // ffmpeg's -y comes first (`ffmpeg -y -i …`): it belongs to the command that follows.
        var leading: [String] = []
        while let first = arguments.first, ["-y", "-n", "--overwrite"].contains(first) { leading.append(arguments.removeFirst()) }
        let command = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 }
        let known = command.flatMap { commands.contains($0) ? $0 : nil } ?? "transcode"
        for (i, token) in arguments.enumerated() {
            if token == "--" { break }
            let value = i + 1 < arguments.count && !arguments[i + 1].hasPrefix("-") ? arguments[i + 1] : nil
            if let advice = hint(for: token, value: value, command: known) ?? ffmpegOnly(token, value: value) {
                return .refuse("\(token) is ffmpeg's option: \(advice)")
            }
            // Tessera's short options are one letter; a longer word after one dash would be read as a bundle of them
            // (`-hide_banner` holds -h, help).
            if isSingleDashWord(token) {
                return .refuse("\(token) is not an option: Tessera's are spelled with two dashes (tessera \(known) --help)")
            }
        }
        if let command, !commands.contains(command), !["help"].contains(command) {
            let near = commands.filter { distance($0, command) <= 2 || $0.hasPrefix(command) }
            return .refuse(near.count == 1 ? "unknown command '\(command)'; did you mean '\(near[0])'?"
                : "unknown command '\(command)'; the commands are \(commands.joined(separator: ", "))")
        }
        guard !leading.isEmpty, command != nil else { return .proceed(leading + arguments) }
        return .proceed([arguments[0]] + leading + arguments.dropFirst())
    }

    /// What ffmpeg reads or writes that Tessera does not: why `path` is no file path, or nil when it is one.
    /// `-` and `pipe:` are standard input or output; `scheme://…` is a URL.
    public static func notAFile(_ path: String, output: Bool = false) -> String? {
        if path == "-" || path.hasPrefix("pipe:") {
            return output ? "writing to standard output is not supported: give a file path"
                : "reading standard input is not supported: give a file path"
        }
        if path.wholeMatch(of: /[A-Za-z][A-Za-z0-9+.\-]*:\/\/.*/) != nil {
            return "a URL \(output ? "output" : "input") is not supported: give a file path"
        }
        return nil
    }

    /// Tessera's words for one ffmpeg option, or nil when `token` is not one.
    static func hint(for token: String, value: String?, command: String) -> String? {
        func use(_ option: String, _ placeholder: String) -> String { "use \(option) \(value ?? placeholder)" }
        switch token {
        case "-i": return "give the input first, without -i: tessera \(command) \(value ?? "INPUT") -o OUTPUT"
        case "-c:v", "-vcodec", "-codec:v":
            let codec = ["libx264": "h264", "h264": "h264", "libx265": "hevc", "hevc": "hevc", "libsvtav1": "av1", "av1": "av1"][value ?? ""]
            return codec.map { "use --codec \($0)" } ?? "use --codec h264, --codec hevc or --codec av1"
        case "-c:a", "-acodec", "-codec:a":
            return ["aac", "copy"].contains(value) ? "use --audio \(value!)" : "use --audio aac, --audio copy or --audio none"
        case "-an": return "use --audio none"
        case "-b:v": return use("--bitrate", "RATE")
        case "-crf": return use("--crf", "N")
        case "-preset": return use("--preset", "PRESET")
        case "-r": return use("--fps", "RATE")
        case "-s": return use("--size", "WxH")
        case "-ac": return use("--audio-channels", "N")
        case "-ar": return use("--audio-rate", "HZ")
        case "-b:a": return use("--audio-bitrate", "RATE")
        case "-maxrate": return use("--maxrate", "RATE")
        case "-bufsize": return use("--bufsize", "SIZE")
        case "-g": return use("--keyint", "N")
        case "-bf": return use("--bframes", "N")
        case "-profile:v": return use("--profile", "PROFILE")
        case "-level", "-level:v": return use("--level", "LEVEL")
        case "-hls_time": return use("--hls-time", "SECONDS") + " with --ladder"
        case "-movflags": return "Tessera always writes faststart MP4: leave it out"
        case "-vf", "-filter:v":
            let filters = value?.split(separator: ",").map(String.init) ?? []
            let options = filters.compactMap(filterOption)
            if !filters.isEmpty, options.count == filters.count { return "use " + options.joined(separator: " ") }
            if filters.count == 1, filters[0].hasPrefix("scale=") {
                return "use --size WxH (exact) or --max-size WxH (fits inside, keeping the aspect ratio)"
            }
            return "Tessera takes no filter graph: use --size, --max-size, --fps, --rotate or --mirror"
        default: return nil
        }
    }

    /// `-word`: one dash and more than one letter, not a number.
    static func isSingleDashWord(_ token: String) -> Bool {
        guard token.count > 2, token.hasPrefix("-"), !token.hasPrefix("--") else { return false }
        return Double(token) == nil
    }

    /// ffmpeg's options that have no Tessera counterpart, or a different one: what to do instead.
    static func ffmpegOnly(_ token: String, value: String?) -> String? {
        let trimming = "trimming is not supported: cut the input first (ffmpeg -ss START -t DURATION -i IN -c copy CUT.mp4), then transcode the cut"
        switch token {
        case "-threads": return "use --threads \(value ?? "N") (libx264 threads per encoder)"
        case "-ss", "-t", "-to", "-sseof": return trimming
        case "-hide_banner", "-nostats", "-stats": return "Tessera prints no banner and shows progress only on a terminal: leave it out"
        case "-nostdin": return "Tessera never reads standard input: leave it out"
        case "-loglevel": return "use --verbose for more, or leave it out (errors are one line)"
        case "-progress": return "use tessera watch or status --json for progress"
        case "-map": return "Tessera takes the main video stream and one audio stream: choose it with --audio-track N"
        case "-f": return "Tessera writes MP4, or HLS/DASH with --ladder and an .m3u8 or .mpd output: leave it out"
        case "-tune": return "Tessera has no --tune: leave it out"
        case "-pix_fmt": return "Tessera writes 4:2:0, 8-bit, or 10-bit with --profile high10 (main10 for hevc and av1): leave it out"
        case "-x264-params", "-x264opts", "-x265-params", "-svtav1-params":
            return "Tessera sets the encoder's parameters from --preset, --crf, --keyint and --bframes"
        case "-vn": return "Tessera always encodes the video: leave it out"
        case "-sn", "-dn": return "Tessera writes no subtitle or data streams: leave it out"
        case "-c", "-codec": return "Tessera encodes video as --codec says and audio as --audio says: leave it out"
        case "-vsync", "-fps_mode": return "use --fps RATE for a constant frame rate"
        case "-aspect": return "use --size WxH"
        case "-hwaccel": return "Tessera decodes in software: leave it out"
        default: return nil
        }
    }

    /// The option for one ffmpeg video filter with the same effect, when there is one.
    static func filterOption(_ filter: String) -> String? {
        let parts = filter.split(separator: "=", maxSplits: 1).map(String.init)
        let arguments = parts.count > 1 ? parts[1].split(separator: ":").map(String.init) : []
        switch parts[0] {
        case "scale":
            let named = arguments.map { $0.split(separator: "=", maxSplits: 1).last.map(String.init) ?? $0 }
            guard named.count >= 2, let w = Int(named[0]), let h = Int(named[1]) else { return nil }
            return w > 0 && h > 0 ? "--size \(w)x\(h)" : nil
        case "fps": return arguments.first.map { "--fps \($0.split(separator: "=").last ?? "")" }
        case "hflip": return "--mirror horizontal"
        case "vflip": return "--mirror vertical"
        case "transpose":
            return ["1": "--rotate 90", "clock": "--rotate 90", "2": "--rotate 270", "cclock": "--rotate 270"][arguments.first ?? ""]
        default: return nil
        }
    }

    /// Edit distance between two short words.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
