import Foundation
import Testing
import TesseraTestSupport

/// `tessera probe --segment-seconds S` says what the length means: cut finer for two segments per encoder, and
/// how many encoders a cluster's coordinator plans for, with the option that shows its plan.
@Suite struct ProbeSegmentNoteTests {
    @Test func probeSaysACoordinatorMayCutFiner() throws {
        let source = try Fixtures.media("note-10s-gop2.mp4", ["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=10",
                                                               "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-keyint_min", "50"])
        let mine = try Tool.run(Tool.tesseraBinary, ["probe", source, "--segment-seconds", "2", "--workers", "1"])
        #expect(mine.status == 0, "\(mine.stderr)")
        #expect(mine.text.contains("plan: 5 segments"), "\(mine.text)")
        #expect(mine.text.contains("cut finer (down to 1 s) where that makes fewer than 2 segments"), "\(mine.text)")
        #expect(mine.text.contains("a cluster's coordinator plans for 8 encoders, 16 segments: --workers 8 shows its plan"), "\(mine.text)")
        let cluster = try Tool.run(Tool.tesseraBinary, ["probe", source, "--segment-seconds", "2", "--workers", "8"])
        #expect(!cluster.text.contains("plan: 5 segments"), "\(cluster.text)")
        let json = try Tool.run(Tool.tesseraBinary, ["probe", source, "--segment-seconds", "2", "--json"])
        #expect((try? JSONSerialization.jsonObject(with: json.stdout)) != nil, "the JSON stays JSON alone")
    }
}
