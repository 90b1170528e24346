import Testing
import TesseraCore

/// The front of an MP4 with its index in reserved room, predicted from one stitched with more room.
struct ReservedIndexTests {
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)] + Array(type.utf8) + body
    }

    static func table(_ type: String, _ offsets: [UInt64]) -> [UInt8] {
        let width = type == "stco" ? 4 : 8
        let count = UInt32(offsets.count)
        var body: [UInt8] = [0, 0, 0, 0, UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)]
        for offset in offsets { body += (0..<width).map { UInt8(truncatingIfNeeded: offset >> (8 * UInt64(width - 1 - $0))) } }
        return box(type, body)
    }

    /// moov with two tracks, one indexed by stco and one by co64, each under trak/mdia/minf/stbl beside other boxes.
    static func moov(video: [UInt64], audio: [UInt64]) -> [UInt8] {
        func track(_ table: [UInt8]) -> [UInt8] {
            box("trak", box("tkhd", [UInt8](repeating: 7, count: 20)) + box("mdia", box("minf", box("stbl", box("stsz", [1, 2, 3, 4]) + table))))
        }
        return box("moov", box("mvhd", [UInt8](repeating: 9, count: 12)) + track(table("stco", video)) + track(table("co64", audio)))
    }

    @Test func chunkOffsetsMoveInEveryTrackAndNothingElse() throws {
        let before = Self.moov(video: [5000, 9000], audio: [6000, 1 << 33])
        let moved = try #require(MP4Layout.movingChunkOffsets(ofMoov: before, by: -1000))
        #expect(moved == Self.moov(video: [4000, 8000], audio: [5000, (1 << 33) - 1000]))
        #expect(MP4Layout.movingChunkOffsets(ofMoov: before, by: -5001) == nil, "an offset below zero")
        #expect(MP4Layout.movingChunkOffsets(ofMoov: before, by: Int64(UInt32.max)) == nil, "an stco offset past 32 bits")
        #expect(MP4Layout.movingChunkOffsets(ofMoov: Array(before.dropLast()), by: 1) == nil, "a box cut short")
    }

    @Test func theFrontWithExactRoomIsPredicted() throws {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let reserved = 4096
        let mediaStart = ftyp.count + reserved + 16
        let moov = Self.moov(video: [UInt64(mediaStart), UInt64(mediaStart + 100)], audio: [UInt64(mediaStart + 50)])
        let free = Self.box("free", [UInt8](repeating: 0, count: reserved - moov.count - 8))
        let mdat: [UInt8] = [0, 0, 0, 8] + Array("free".utf8) + [0, 0, 0, 208] + Array("mdat".utf8)
        let measured = ftyp + moov + free + mdat + [UInt8](repeating: 0xAB, count: 200)
        let index = try #require(ReservedIndex(measured: measured, size: Int64(measured.count), reserved: reserved))
        #expect(index.reserve == moov.count + 8)
        let shift = reserved - index.reserve
        let start = UInt64(mediaStart - shift)
        #expect(index.front == ftyp + Self.moov(video: [start, start + 100], audio: [start + 50]) + [0, 0, 0, 8] + Array("free".utf8) + mdat)
        #expect(index.mediaStart == mediaStart - shift)
        #expect(index.size == Int64(measured.count - shift))
        #expect(ReservedIndex(measured: measured, size: Int64(measured.count), reserved: moov.count + 4) == nil, "no room for the free box")
    }
}
