import TesseraCore

/// A job's spec as job JSON shows it: every key written, `null` when unset, so scripts need not test for a key.
/// The stored spec (and so its digest) leaves unset keys out, as it always has.
struct JobSpecJSON: Encodable {
    let spec: JobSpec

    enum CodingKeys: String, CodingKey { case settings, audio, segmentSeconds, picture, ladder, outputMode, replacesOutputs }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(NullFilled(spec.settings), forKey: .settings)
        try c.encode(NullFilled(spec.audio), forKey: .audio)
        try c.encode(spec.segmentSeconds, forKey: .segmentSeconds)
        try c.encode(NullFilled(spec.picture), forKey: .picture)
        try c.encode(spec.ladder.map(NullFilled.init), forKey: .ladder)
        try c.encode(spec.outputMode.map(OutputMode.text), forKey: .outputMode)
        try c.encode(spec.replacesOutputs, forKey: .replacesOutputs)
    }
}
