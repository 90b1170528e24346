/// Bit rates measured from segment sizes and durations, as HLS and DASH declare them. Exact in integers: a
/// declared rate is rounded up, so it is never below what the files hold.
public enum SegmentBitrate {
    /// One segment as a rate sees it: `bytes` over `duration` ticks.
    public struct Sample: Hashable, Sendable {
        public var duration: Int64
        public var bytes: Int64
        public init(duration: Int64, bytes: Int64) {
            self.duration = duration
            self.bytes = bytes
        }
    }

    /// Total bits over total duration (HLS AVERAGE-BANDWIDTH), bits per second rounded up.
    public static func average(_ samples: [Sample], timescale: Int64) -> Int {
        rate(bytes: samples.reduce(0) { $0 + Int128($1.bytes) }, ticks: samples.reduce(0) { $0 + Int128($1.duration) }, timescale: timescale)
    }

    /// The highest rate of any single segment (DASH `@bandwidth`): with `minBufferTime` at least the longest
    /// segment, a channel of this rate delivers every segment before it is due (ISO/IEC 23009-1 5.3.5.2).
    public static func peakOfAnySegment(_ samples: [Sample], timescale: Int64) -> Int {
        samples.map { rate(bytes: Int128($0.bytes), ticks: Int128($0.duration), timescale: timescale) }.max() ?? 0
    }

    /// HLS BANDWIDTH, the peak segment bit rate as rfc8216bis 4.1 defines it and Apple's validator measures it: the
    /// highest rate of any run of consecutive segments lasting from 0.5 × the target duration to 1.5 × it + 0.5 s.
    /// A short last segment alone does not count, so a dense tail does not inflate the figure.
    public static func hlsPeak(_ samples: [Sample], timescale: Int64, targetDuration: Int) -> Int {
        let scale = Int128(timescale), target = Int128(targetDuration)
        var best: (bytes: Int128, ticks: Int128)?
        for first in samples.indices {
            var bytes: Int128 = 0, ticks: Int128 = 0
            for sample in samples[first...] {
                bytes += Int128(sample.bytes)
                ticks += Int128(sample.duration)
                // ticks / scale > 1.5 × target + 0.5, i.e. 2 × ticks > (3 × target + 1) × scale: longer runs only grow.
                if 2 * ticks > (3 * target + 1) * scale { break }
                guard 2 * ticks >= target * scale else { continue }
                if let current = best, bytes * current.ticks <= current.bytes * ticks { continue }
                best = (bytes, ticks)
            }
        }
        // Only a presentation shorter than half the target has no such run: its whole length is the one run.
        let chosen = best ?? (bytes: samples.reduce(0) { $0 + Int128($1.bytes) }, ticks: samples.reduce(0) { $0 + Int128($1.duration) })
        return rate(bytes: chosen.bytes, ticks: chosen.ticks, timescale: timescale)
    }

    /// Bits per second of `bytes` over `ticks`, rounded up.
    static func rate(bytes: Int128, ticks: Int128, timescale: Int64) -> Int {
        guard ticks > 0 else { return 0 }
        let bits = 8 * bytes * Int128(timescale)
        return Int(clamping: (bits + ticks - 1) / ticks)
    }
}

extension MediaTrack {
    /// Each media segment's size and duration (the init segment is fetched once and is not counted).
    public var bitrateSamples: [SegmentBitrate.Sample] { segments.map { .init(duration: $0.duration, bytes: $0.byteSize) } }

    /// The I-frame playlist's entries: each segment's first IDR range, lasting until the next segment's.
    public var iFrameSamples: [SegmentBitrate.Sample]? {
        let ranges = segments.compactMap(\.iFrame)
        guard !segments.isEmpty, ranges.count == segments.count else { return nil }
        return zip(segments, ranges).map { .init(duration: $0.duration, bytes: $1.length) }
    }
}

/// Times as playlists and manifests print them.
enum StreamingTime {
    /// `ticks / timescale` seconds in decimal, rounded half up to the microsecond, trailing zeros dropped down to
    /// `minimumDecimals` digits.
    static func seconds(_ ticks: Int64, timescale: Int64, minimumDecimals: Int = 3) -> String {
        let micros = microseconds(ticks, timescale: timescale)
        let whole = micros / 1_000_000
        var fraction = String(micros % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.count > minimumDecimals, fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }

    /// Whole microseconds, rounded half up (durations are never negative).
    static func microseconds(_ ticks: Int64, timescale: Int64) -> Int64 {
        let scaled = Int128(ticks) * 1_000_000
        return Int64((2 * scaled + Int128(timescale)) / (2 * Int128(timescale)))
    }

    /// ISO 8601 duration (`PT6.006S`) for the MPD.
    static func isoDuration(_ ticks: Int64, timescale: Int64) -> String {
        "PT" + seconds(ticks, timescale: timescale, minimumDecimals: 0) + "S"
    }
}
