import Foundation
import Testing
import TesseraCore
import TesseraEngine
@testable import TesseraCluster

/// A job with a segment length on a cluster's coordinator: cut as `tessera probe --segment-seconds S --workers 8`
/// shows, finer than S where that makes two segments per encoder of the eight it plans for.
@Suite struct SegmentLengthPlanTests {
    @Test func theCoordinatorCutsAsProbeForItsEncodersShows() throws {
        let cluster = try InProcessCluster()
        defer { cluster.shutdown() }
        // 10 s with a keyframe every 2 s, as the clip that was cut into 16 segments for 2 s asked.
        let clip = cluster.directory.appendingPathComponent("ten.mp4").path
        _ = try InProcessCluster.tool("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=10",
                                                 "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-keyint_min", "50", "-pix_fmt", "yuv420p", clip])
        let spec = JobSpec(settings: EncoderSettings(preset: "ultrafast"), segmentSeconds: 2)
        let job = try cluster.database.submit(input: clip, output: cluster.directory.appendingPathComponent("out.mp4").path, spec: spec)
        let store = cluster.database.open()
        defer { store.close() }
        let deadline = Date().addingTimeInterval(30)
        while try store.segments(job).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let planned = try store.segments(job).count
        let shown = try JobPlanner.plan(MediaProbe.probe(clip), options: JobOptions(segmentSeconds: 2, workers: Coordinator.Options.defaultPlanningWorkers))
        #expect(planned == shown.cuts.segments.count, "planned \(planned), probe shows \(shown.cuts.segments.count)")
        #expect(planned > 5, "finer than 2 s: \(planned) segments")
    }
}
