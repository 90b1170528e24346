import Testing
@testable import TesseraCore

struct RunOutTests {
    /// Two closed GOPs of 9 frames with B-frames, in decode order: I0 P4 B2 B1 B3 P8 B6 B5 B7, then the
    /// same shape from 9 on.
    static let packets: [PacketInfo] = {
        let shape: [Int64] = [0, 4, 2, 1, 3, 8, 6, 5, 7]
        return (0..<2).flatMap { gop in
            shape.enumerated().map { n, offset in
                PacketInfo(index: gop * 9 + n, pts: Int64(gop * 9) + offset, dts: Int64(gop * 9 + n) - 1, duration: 1,
                           keyFlag: n == 0, discard: false, size: 100, randomAccess: n == 0 ? .idr : .none)
            }
        }
    }()

    static func segment(_ k: Int) -> PlannedSegment {
        PlannedSegment(index: k, startPTS: Int64(9 * k), endPTS: Int64(9 * k + 9), firstPacket: 9 * k, lastPacket: 9 * k + 8,
                       frameCount: 9, preRollPackets: 0, entry: .idr)
    }

    /// The frames shown next are 9 and 10; 10 is a B-frame whose packet comes fourth in the next GOP.
    @Test func takesTheNextFramesInDisplayOrderAndThePacketsTheyNeed() {
        let runOut = RunOut.after(Self.segment(0), packets: Self.packets, frames: 2, minimum: 1)
        #expect(runOut == RunOut(packets: 4, endPTS: 11))
    }

    /// At most a quarter of the segment's own frames: 9 / 4 = 2 however many the encoder would look at;
    /// none when that is under the minimum, unless the encoder looks at no more than that anyway.
    @Test func isCappedAtAQuarterOfTheSegment() {
        #expect(RunOut.after(Self.segment(0), packets: Self.packets, frames: 40, minimum: 1) == RunOut(packets: 4, endPTS: 11))
        #expect(RunOut.after(Self.segment(0), packets: Self.packets, frames: 1) == RunOut(packets: 1, endPTS: 10))
        #expect(RunOut.after(Self.segment(0), packets: Self.packets, frames: 40) == nil)
    }

    @Test func noneAfterTheLastSegmentOrWithoutLookahead() {
        #expect(RunOut.after(Self.segment(1), packets: Self.packets, frames: 10) == nil)
        #expect(RunOut.after(Self.segment(0), packets: Self.packets, frames: 0) == nil)
    }

    /// Frames an edit list drops are not shown to the encoder.
    @Test func skipsDiscardedFrames() {
        var packets = Self.packets
        packets[9].discard = true
        #expect(RunOut.after(Self.segment(0), packets: packets, frames: 2, minimum: 1) == RunOut(packets: 4, endPTS: 12))
    }

    /// A payload carries the run-out's packets after the segment's, survives serialisation with them, and
    /// refuses a count that does not add up.
    @Test func payloadCountsTheRunOutPackets() throws {
        let task = PayloadTests().sampleTask()
        var header = task.header
        header.runOut = RunOut(packets: 2, endPTS: 300)
        let packets = task.packets + task.packets.prefix(2)
        let withRunOut = try SegmentTask(validating: header, packets: packets)
        #expect(try SegmentTask(serialized: withRunOut.serialized()) == withRunOut)
        #expect(throws: PayloadError.self) { try SegmentTask(validating: header, packets: task.packets) }
        header.runOut = RunOut(packets: 2, endPTS: header.segment.endPTS)
        #expect(throws: PayloadError.self) { try SegmentTask(validating: header, packets: packets) }
    }
}
