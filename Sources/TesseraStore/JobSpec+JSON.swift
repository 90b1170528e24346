import TesseraCore

/// A job's spec as job JSON shows it: every key written, `null` when unset, so scripts need not test for a key.
/// The stored spec (and so its digest) leaves unset keys out, as it always has. Written key by key, not by
/// reflection: `list --json` writes hundreds of jobs.
struct JobSpecJSON: Encodable {
    let spec: JobSpec

    enum CodingKeys: String, CodingKey { case settings, audio, segmentSeconds, picture, ladder, outputMode, replacesOutputs, audit }
    enum SettingsKeys: String, CodingKey {
        case codec, preset, crf, bitrate, maxrate, bufsize, profile, level, keyint, keyintSeconds, encoderKeyint, bframes, threads, passes
    }
    enum AudioKeys: String, CodingKey { case mode, bitrate, sampleRate, channels, track }
    enum PictureKeys: String, CodingKey { case size, maxSize, scaler, fps, rotate, mirror, color }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let s = spec.settings
        var settings = c.nestedContainer(keyedBy: SettingsKeys.self, forKey: .settings)
        try settings.encode(s.videoCodec, forKey: .codec)
        try settings.encode(s.preset, forKey: .preset)
        try settings.encode(s.crf, forKey: .crf)
        try settings.encode(s.bitrate, forKey: .bitrate)
        try settings.encode(s.maxrate, forKey: .maxrate)
        try settings.encode(s.bufsize, forKey: .bufsize)
        try settings.encode(s.profile, forKey: .profile)
        try settings.encode(s.level, forKey: .level)
        try settings.encode(s.keyint, forKey: .keyint)
        try settings.encode(s.keyintSeconds, forKey: .keyintSeconds)
        try settings.encode(s.encoderKeyint, forKey: .encoderKeyint)
        try settings.encode(s.bframes, forKey: .bframes)
        try settings.encode(s.threads, forKey: .threads)
        try settings.encode(s.passes, forKey: .passes)
        let a = spec.audio
        var audio = c.nestedContainer(keyedBy: AudioKeys.self, forKey: .audio)
        try audio.encode(a.mode, forKey: .mode)
        try audio.encode(a.bitrate, forKey: .bitrate)
        try audio.encode(a.sampleRate, forKey: .sampleRate)
        try audio.encode(a.channels, forKey: .channels)
        try audio.encode(a.track, forKey: .track)
        let p = spec.picture
        var picture = c.nestedContainer(keyedBy: PictureKeys.self, forKey: .picture)
        try picture.encode(p.size, forKey: .size)
        try picture.encode(p.maxSize, forKey: .maxSize)
        try picture.encode(p.scaler, forKey: .scaler)
        try picture.encode(p.fps, forKey: .fps)
        try picture.encode(p.rotate, forKey: .rotate)
        try picture.encode(p.mirror, forKey: .mirror)
        try picture.encode(p.color, forKey: .color)
        try c.encode(spec.segmentSeconds, forKey: .segmentSeconds)
        try c.encode(spec.ladder, forKey: .ladder)
        try c.encode(spec.outputMode.map(OutputMode.text), forKey: .outputMode)
        try c.encode(spec.replacesOutputs, forKey: .replacesOutputs)
        try c.encode(spec.audit, forKey: .audit)
    }
}
