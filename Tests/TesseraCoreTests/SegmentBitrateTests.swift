import Testing
import TesseraCore

/// BANDWIDTH and AVERAGE-BANDWIDTH arithmetic, against numbers worked out by hand.
@Suite struct SegmentBitrateTests {
    private func samples(_ pairs: [(Int64, Int64)]) -> [SegmentBitrate.Sample] { pairs.map { .init(duration: $0.0, bytes: $0.1) } }

    @Test func averageIsTotalBitsOverTotalDurationRoundedUp() {
        // 3 × 250000 B × 8 over 6 s = 1000000 b/s exactly; one byte more rounds up.
        #expect(SegmentBitrate.average(samples([(2000, 250_000), (2000, 250_000), (2000, 250_000)]), timescale: 1000) == 1_000_000)
        #expect(SegmentBitrate.average(samples([(2000, 250_000), (2000, 250_000), (2000, 250_001)]), timescale: 1000) == 1_000_002)
    }

    @Test func hlsPeakIsTheDensestRunBetweenHalfAndOneAndAHalfTargets() {
        // Target 6: runs of 3 s to 9.5 s count. Segment 2 alone (6 s, 1.5 Mb/s) is the densest such run; the
        // 1 s tail at 4 Mb/s counts only with segment 2: (1125000+500000) × 8 / 7 = 1857142.9.
        let track = samples([(6000, 562_500), (6000, 1_125_000), (1000, 500_000)])
        #expect(SegmentBitrate.hlsPeak(track, timescale: 1000, targetDuration: 6) == 1_857_143)
        // Per segment, the tail alone would say 4 Mb/s: what DASH's bandwidth uses, not what HLS declares.
        #expect(SegmentBitrate.peakOfAnySegment(track, timescale: 1000) == 4_000_000)
        // Two short segments together make a run: 2 × 2 s at 2 and 6 Mb/s average 4 Mb/s over 4 s.
        #expect(SegmentBitrate.hlsPeak(samples([(2000, 500_000), (2000, 1_500_000), (2000, 250_000)]), timescale: 1000, targetDuration: 6) == 4_000_000)
    }

    @Test func aClipShorterThanHalfTheTargetIsMeasuredWhole() {
        #expect(SegmentBitrate.hlsPeak(samples([(400, 1000)]), timescale: 1000, targetDuration: 1) == 20_000)
    }
}
