import Foundation
import Testing
import TesseraCore

/// CODECS strings from real headers: libx264 streams made by ffmpeg, read back by ffprobe.
@Suite struct CodecStringTests {
    /// ffprobe's profile names and the profile_idc they stand for.
    private static let profileIDC = ["High": 100, "Main": 77, "Baseline": 66, "Constrained Baseline": 66]

    @Test(arguments: [("high", "3.1"), ("main", "3.0"), ("baseline", "2.1"), ("high", "4.0")])
    func avcStringComesFromTheSPS(profile: String, level: String) throws {
        let directory = try CommandLineTool.scratchDirectory("codecs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("clip.mp4").path
        try CommandLineTool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "0.2", "-c:v", "libx264",
                                    "-profile:v", profile, "-level", level, "-pix_fmt", "yuv420p", clip])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip)))
        let avcC = try #require(mp4BoxPayload("avcC", in: bytes))
        let codec = try CodecString.avc(avcC)

        let probe = try CommandLineTool.ffprobe(["-select_streams", "v:0", "-show_entries", "stream=profile,level", "-of", "csv=p=0", clip])
        let fields = probe.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        let idc = try #require(Self.profileIDC[String(fields[0])])
        let levelIDC = try #require(Int(fields[1]))
        #expect(codec.hasPrefix("avc1.") && codec.count == 11)
        #expect(Int(codec.dropFirst(5).prefix(2), radix: 16) == idc)
        #expect(Int(codec.suffix(2), radix: 16) == levelIDC)
        #expect(levelIDC == Int((Double(level)! * 10).rounded()))
        // In Baseline, constraint_set1_flag (0x40) is what makes it "Constrained".
        let constraints = try #require(UInt8(codec.dropFirst(7).prefix(2), radix: 16))
        if idc == 66 { #expect((constraints & 0x40 != 0) == (fields[0] == "Constrained Baseline")) }
        // The SPS alone gives the same string.
        let spsLength = Int(avcC[6]) << 8 | Int(avcC[7])
        #expect(try CodecString.avc(Array(avcC[8..<(8 + spsLength)])) == codec)
    }

    @Test func knownRecordsGiveKnownStrings() throws {
        #expect(try CodecString.avc(SmallLadder.avcC(profile: 0x42, constraints: 0xE0, level: 0x1E)) == "avc1.42E01E")
        #expect(try CodecString.avc(SmallLadder.avcC(profile: 0x64, constraints: 0x00, level: 0x28)) == "avc1.640028")
        #expect(throws: PackagingError.self) { try CodecString.avc([]) }
        #expect(throws: PackagingError.self) { try CodecString.avc([2, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F]) }
        // A PPS where the SPS should be.
        #expect(throws: PackagingError.self) { try CodecString.avc([1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x68, 0x64, 0, 0x1F]) }
        // An SPS length running past the record.
        #expect(throws: PackagingError.self) { try CodecString.avc([1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 9, 0x67, 0x64, 0, 0x1F]) }
    }

    @Test(arguments: [(44100, 1), (48000, 2), (22050, 6)])
    func aacFormatComesFromTheAudioSpecificConfig(sampleRate: Int, channels: Int) throws {
        let directory = try CommandLineTool.scratchDirectory("aac")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("clip.mp4").path
        try CommandLineTool.ffmpeg(["-f", "lavfi", "-i", "sine=sample_rate=\(sampleRate)", "-t", "0.3", "-ac", String(channels), "-c:a", "aac", clip])
        let format = try AudioFormat(audioSpecificConfig: try CommandLineTool.audioExtradata(clip))
        #expect(format == AudioFormat(objectType: 2, channels: channels, sampleRate: sampleRate))
        let profile = try CommandLineTool.ffprobe(["-select_streams", "a:0", "-show_entries", "stream=profile", "-of", "csv=p=0", clip])
        #expect(profile.trimmingCharacters(in: .whitespacesAndNewlines) == "LC")
        #expect(CodecString.aac(format) == "mp4a.40.2")
    }

    @Test func heAACAndEscapedObjectTypes() throws {
        // AOT 5 (SBR), 24 kHz core (index 6), stereo: 00101 0110 0010 0… = 0x2B 0x10.
        let he = try AudioFormat(audioSpecificConfig: [0x2B, 0x10])
        #expect(he == AudioFormat(objectType: 5, channels: 2, sampleRate: 24000))
        #expect(CodecString.aac(he) == "mp4a.40.5")
        // AOT 31 escapes to 32 + 6 bits: 11111 000010 (34) 0011 (48 kHz) 0001 (mono).
        #expect(try AudioFormat(audioSpecificConfig: [0xF8, 0x46, 0x20]).objectType == 34)
        #expect(throws: PackagingError.self) { try AudioFormat(audioSpecificConfig: [0x10]) }
        // Reserved sampling frequency index 13.
        #expect(throws: PackagingError.self) { try AudioFormat(audioSpecificConfig: [0x16, 0x90]) }
    }
}
