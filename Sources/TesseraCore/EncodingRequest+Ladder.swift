extension EncodingRequest {
    /// The request's ladder, checked; nil when none is asked for.
    public func resolvedLadder() throws(SettingsError) -> Ladder? {
        guard let ladder else { return nil }
        do {
            return try Ladder(items: ladder)
        } catch {
            throw SettingsError(error.description)
        }
    }

    /// Refuses a bad ladder, or one beside the options it replaces, before any work starts.
    func checkLadder(settings: EncoderSettings, picture: PictureSettings) throws(SettingsError) {
        if let hlsTime, !(hlsTime > 0) { throw SettingsError("--hls-time must be a positive number of seconds") }
        guard try resolvedLadder() != nil else {
            if hlsTime != nil { throw SettingsError("--hls-time needs --ladder (it is the length of a ladder's segments)") }
            if audioPerRung == true { throw SettingsError("--audio-per-rung needs --ladder") }
            if twoPass == true {
                throw SettingsError("--two-pass needs --ladder (one output runs two passes with --bitrate)")
            }
            return
        }
        do {
            try Ladder.checkCompatible(settings: settings, picture: picture)
        } catch {
            throw SettingsError(error.description)
        }
    }

    /// The ladder frozen with a job writing `output`: HLS for `.m3u8`, DASH for `.mpd` (with the other manifest
    /// too when `alsoHLS`/`alsoDASH`), else one file per rung; nil without a ladder. Refuses, naming the option,
    /// a streaming output without a ladder and an `--also-…` beside the wrong output.
    public func ladderSpec(output: String, alsoHLS: Bool = false, alsoDASH: Bool = false) throws(SettingsError) -> LadderSpec? {
        let lower = output.lowercased()
        let hls = lower.hasSuffix(".m3u8"), dash = lower.hasSuffix(".mpd")
        let ladder = try resolvedLadder()
        if ladder == nil, hls || dash {
            throw SettingsError("HLS/DASH output needs --ladder (e.g. --ladder 1080,720,480,360)")
        }
        if alsoDASH, !hls { throw SettingsError("--also-dash needs an .m3u8 output (-o DIR/master.m3u8)") }
        if alsoHLS, !dash { throw SettingsError("--also-hls needs an .mpd output (-o DIR/manifest.mpd)") }
        guard let ladder else { return nil }
        return LadderSpec(ladder: ladder, packaging: .forOutput(output, alsoHLS: alsoHLS, alsoDASH: alsoDASH),
                          segmentSeconds: hlsTime ?? LadderSpec.defaultSegmentSeconds, audioPerRung: audioPerRung ?? false,
                          twoPass: twoPass ?? false)
    }

    /// A ladder given in a layer replaces the sizing and the rate control of the layers below it.
    mutating func dropOptionsALadderReplaces() {
        size = nil
        maxSize = nil
        bitrate = nil
        passes = nil
        maxrate = nil
        bufsize = nil
    }

    /// `ladder` in a settings file: a string (`"1080,720:3M"`), one number, or a list of heights and
    /// `HEIGHT:RATE` strings.
    static func ladderItems(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> [String]? {
        guard c.contains(key) else { return nil }
        if let text = try? c.decode(String.self, forKey: key) { return [text] }
        if let number = try? c.decode(Int.self, forKey: key) { return [String(number)] }
        var list = try c.nestedUnkeyedContainer(forKey: key)
        var items: [String] = []
        while !list.isAtEnd {
            if let text = try? list.decode(String.self) { items.append(text) } else { items.append(String(try list.decode(Int.self))) }
        }
        return items
    }
}
