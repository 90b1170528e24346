import Testing
import TesseraCore
@testable import TesseraCluster
import TesseraEngine
import TesseraTesting

/// Frames in flight and the encode rate between segment completions, without a worker.
struct ProgressMeterTests {
    typealias Ref = ClusterMessage.SegmentRef
    static let job = "00000000-0000-0000-0000-00000000000a"
    static func ref(_ index: Int, _ job: String = job) -> Ref { Ref(jobID: job, index: index) }

    @Test func reportsCountInFlightUntilTheSegmentIsDone() {
        var meter = ProgressMeter()
        meter.reported(Self.ref(0), frames: 40, now: 0)
        meter.reported(Self.ref(1), frames: 25, now: 0.5)
        #expect(meter.inFlight(Self.job) == 65)
        meter.reported(Self.ref(0), frames: 30, now: 0.6)
        #expect(meter.inFlight(Self.job) == 65, "a report never goes back (an older one arriving late)")
        meter.completed(Self.ref(0), frames: 100, now: 1)
        #expect(meter.inFlight(Self.job) == 25, "a done segment's frames are counted by the store, not in flight")
        meter.abandoned(Self.ref(1))
        #expect(meter.inFlight(Self.job) == 0)
        #expect(meter.taken() == [Self.job])
        #expect(meter.taken().isEmpty)
    }

    @Test func theRateCoversTheLastSecondsOfReportedAndCompletedFrames() {
        var meter = ProgressMeter()
        #expect(meter.rate(Self.job, now: 0) == nil)
        // 50 frames a second, for 20 s, over two tasks.
        for step in 1...40 {
            let now = Double(step) * 0.5
            meter.reported(Self.ref(step % 2), frames: step * 25 / 2 + 25, now: now)
        }
        let rate = meter.rate(Self.job, now: 20)
        #expect(rate.map { abs($0 - 50) < 3 } == true, "\(String(describing: rate))")
        // Nothing more for 5 s: the rate falls.
        #expect((meter.rate(Self.job, now: 25) ?? 0) < 40)
    }

    @Test func jobsAreApartAndADroppedJobIsForgotten() {
        var meter = ProgressMeter()
        let other = "00000000-0000-0000-0000-00000000000b"
        meter.reported(Self.ref(0), frames: 10, now: 0)
        meter.reported(Self.ref(0, other), frames: 7, now: 0)
        meter.dropped(Self.job)
        #expect(meter.inFlight(Self.job) == 0 && meter.inFlight(other) == 7)
        #expect(meter.rate(Self.job, now: 5) == nil)
    }
}

/// What `status --json`, `watch` and a transcode's bar show of a ladder job: frames of every rung.
struct LadderProgressTests {
    @Test func aLaddersProgressCountsTheFramesOfEveryRung() throws {
        let database = InMemoryJobDatabase()
        let store = database.open()
        defer { store.close() }
        var spec = JobSpec()
        spec.ladder = LadderSpec(ladder: try Ladder(parsing: "720:3M,360"), packaging: .hls, twoPass: true)
        let job = try database.submit(input: "/in.mp4", output: "/out/master.m3u8", spec: spec, coordinator: nil, priority: 50)
        _ = try store.claimQueuedJob(coordinator: "c", only: nil, outranking: false)
        let segments = (0..<2).map {
            PlannedSegment(index: $0, startPTS: Int64($0 * 25), endPTS: Int64($0 * 25 + 25), firstPacket: $0 * 25, lastPacket: $0 * 25 + 24,
                           frameCount: 25, preRollPackets: 0, entry: .idr)
        }
        #expect(try store.addSegments(job, segments, framePixels: nil, outputs: 2))
        try store.recordProgress(job, framesEncoding: 10, fps: 20, speed: 1)
        let progress = TranscodeProgress(try store.job(job))
        #expect(progress.framesTotal == 100 && progress.framesDone == 20 && progress.fps == 40)
        #expect(progress.pass == 1 && progress.label == "first pass", "a two-pass ladder counts its passes as one output does")
        #expect(progress.fraction == 0.2)
    }
}
