import Testing
import TesseraCore

@Suite struct DecodeTimestampsTests {
    func packets(_ pts: [Int64], _ dts: [Int64?]) -> [MediaPacket] {
        zip(pts, dts).map { MediaPacket(pts: $0, dts: $1, duration: 0, flags: 0, data: []) }
    }

    @Test func anEncodersOrderedTimestampsStand() {
        // I P B B with a two-frame delay, as libx264 gives them; one frame alone with its delay.
        let given = packets([0, 1536, 512, 1024], [-1024, -512, 0, 512])
        #expect(DecodeTimestamps.ordered(given) == given)
        let two = packets([0, 512], [-1024, -512])
        #expect(DecodeTimestamps.ordered(two) == two)
    }

    @Test func timestampsThatCannotBeRightAreDerivedFromThePictures() {
        // libx265 with fewer frames than its B-frame delay: dts from memory it never set.
        #expect(DecodeTimestamps.ordered(packets([0], [6_510_615_555_426_900_571])).map(\.dts) == [0])
        #expect(DecodeTimestamps.ordered(packets([0, 512], [6_510_615_555_426_900_571, 6_510_615_555_426_901_083])).map(\.dts) == [0, 512])
        // The least delay that shows each picture after it is decoded: one frame for I P B B.
        #expect(DecodeTimestamps.ordered(packets([0, 1536, 512, 1024], [-1024, nil, 0, 512])).map(\.dts) == [-512, 0, 512, 1024])
        #expect(DecodeTimestamps.ordered(packets([0, 1536, 512, 1024], [-1024, -512, 0, 0])).map(\.dts) == [-512, 0, 512, 1024], "not rising")
        #expect(DecodeTimestamps.ordered(packets([0, 512], [Int64.min / 2, -512])).map(\.dts) == [0, 512], "far before the first picture")
    }
}
