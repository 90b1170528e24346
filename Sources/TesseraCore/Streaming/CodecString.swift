/// RFC 6381 codec strings (HLS `CODECS`, DASH `codecs`) built from the stream's own headers, not from settings:
/// what the decoder will be told must be what the bitstream says.
public enum CodecString {
    /// `avc1.PPCCLL` from an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1) or a bare SPS NAL unit:
    /// profile_idc, the constraint-flags byte and level_idc of the first SPS, in hex.
    public static func avc(_ configuration: [UInt8]) throws(PackagingError) -> String {
        let sps = try firstSPS(configuration)
        return "avc1." + sps[1...3].map(hex).joined()
    }

    /// `mp4a.40.N` for MPEG-4 audio object type N (2: AAC-LC, 5: HE-AAC, 29: HE-AAC v2).
    public static func aac(_ format: AudioFormat) -> String { "mp4a.40.\(format.objectType)" }

    /// The first SPS NAL unit: the record's, or `configuration` itself when it is an SPS (NAL type 7).
    static func firstSPS(_ configuration: [UInt8]) throws(PackagingError) -> [UInt8] {
        func invalid(_ problem: String) -> PackagingError { PackagingError(.invalidCodecConfiguration, "H.264 configuration: \(problem)") }
        guard let first = configuration.first else { throw invalid("empty") }
        if first & 0x80 == 0, first & 0x1F == 7 {
            guard configuration.count >= 4 else { throw invalid("SPS of \(configuration.count) bytes") }
            return configuration
        }
        // configurationVersion 1, three profile/level bytes, lengthSizeMinusOne, then numOfSequenceParameterSets.
        guard first == 1 else { throw invalid("configurationVersion \(first), not 1 (avcC) and not an SPS") }
        guard configuration.count >= 8, configuration[5] & 0x1F >= 1 else { throw invalid("avcC record has no SPS") }
        let length = Int(configuration[6]) << 8 | Int(configuration[7])
        guard length >= 4, configuration.count >= 8 + length else { throw invalid("avcC SPS of \(length) bytes runs past the record") }
        let sps = Array(configuration[8..<(8 + length)])
        guard sps[0] & 0x1F == 7 else { throw invalid("avcC's first parameter set is NAL type \(sps[0] & 0x1F), not an SPS") }
        return sps
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

extension AudioFormat {
    /// The AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1, the esds DecoderSpecificInfo): object type, sampling
    /// frequency and channel configuration. An explicit (implicitly signalled) SBR extension is not looked for.
    public init(audioSpecificConfig bytes: [UInt8]) throws(PackagingError) {
        func invalid(_ problem: String) -> PackagingError { PackagingError(.invalidCodecConfiguration, "AudioSpecificConfig: \(problem)") }
        var reader = BitReader(bytes)
        guard var objectType = reader.read(5) else { throw invalid("empty") }
        if objectType == 31 {
            guard let escape = reader.read(6) else { throw invalid("truncated object type") }
            objectType = 32 + escape
        }
        guard let frequencyIndex = reader.read(4) else { throw invalid("no sampling frequency") }
        let rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
        let sampleRate: Int
        if frequencyIndex == 15 {
            guard let explicit = reader.read(24) else { throw invalid("truncated sampling frequency") }
            sampleRate = explicit
        } else {
            guard frequencyIndex < rates.count else { throw invalid("reserved sampling frequency index \(frequencyIndex)") }
            sampleRate = rates[frequencyIndex]
        }
        guard let channelConfiguration = reader.read(4) else { throw invalid("no channel configuration") }
        // Configurations 1-6 are that many channels, 7 is 7.1 (8 channels); 0 defers to a program config element.
        let channels = channelConfiguration == 7 ? 8 : channelConfiguration
        guard (1...6).contains(channels) || channels == 8 else { throw invalid("channel configuration \(channelConfiguration) is not supported") }
        self.init(objectType: objectType, channels: channels, sampleRate: sampleRate)
    }
}

/// Reads big-endian bit fields, most significant bit first.
struct BitReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func read(_ count: Int) -> Int? {
        guard position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0..<count {
            value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return value
    }
}
