import Testing
import TesseraCore
import TesseraEngine
import TesseraTestSupport

/// An HDR source made 8-bit is said in one line, with the profile that keeps its 10 bits; 10-bit outputs and
/// SDR sources are not.
@Suite struct HDRNoticeTests {
    static func source(_ name: String, transfer: String) throws -> String {
        try Fixtures.media(name, ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:d=1", "-pix_fmt", "yuv420p10le",
                                  "-c:v", "libx264", "-preset", "ultrafast", "-color_primaries", "bt2020", "-color_trc", transfer,
                                  "-colorspace", "bt2020nc"])
    }

    static func plan(_ path: String, _ settings: EncoderSettings) throws -> JobPlan {
        try JobPlanner.plan(try MediaProbe.probe(path), options: JobOptions(settings: settings, segmentSeconds: 1, workers: 2))
    }

    @Test func anHDRSourceMadeEightBitIsSaid() throws {
        let pq = try Self.source("pq.mp4", transfer: "smpte2084"), hlg = try Self.source("hlg.mp4", transfer: "arib-std-b67")
        let notice = try Self.plan(pq, EncoderSettings(preset: "ultrafast")).hdrNotice
        #expect(notice == "\(pq): HDR (PQ) video made 8-bit, which bands; give --profile high10 to keep its 10 bits")
        #expect(try Self.plan(hlg, EncoderSettings(preset: "ultrafast")).hdrNotice?.contains("HDR (HLG)") == true)
        #expect(try Self.plan(pq, EncoderSettings(preset: "ultrafast", profile: "high10")).hdrNotice == nil)
        let sdr = try Self.source("bt2020-sdr.mp4", transfer: "bt2020-10")
        #expect(try Self.plan(sdr, EncoderSettings(preset: "ultrafast")).hdrNotice == nil)
    }
}
