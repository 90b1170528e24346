import FFmpegKit
import Foundation
import Testing
import TesseraCore
import TesseraTestSupport
@testable import TesseraEngine

/// A worker's demux of an MPEG-TS or MXF task from a stretch of the object, against one demux of the whole file: the same
/// packets byte for byte wherever the stretch starts, the object's head and the stretch the only bytes read.
struct StretchDemuxTests {
    /// A file in memory, read at any offset, remembering what was read.
    final class MemoryBytes: RandomAccessBytes {
        let bytes: [UInt8]
        var reads: [Range<Int64>] = []
        init(_ path: String) throws { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
        var size: Int64 { Int64(bytes.count) }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard offset < size else { return 0 }
            let count = min(buffer.count, bytes.count - Int(offset))
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<(Int(offset) + count)])) }
            reads.append(offset..<(offset + Int64(count)))
            return count
        }
    }

    struct Demuxed {
        var pts: Int64?
        var key: Bool
        var position: Int64
        var data: [UInt8]
    }

    /// Every video packet of `path`, demuxed once from the start, and the video stream's PID.
    static func wholeDemux(_ path: String) throws -> (packets: [Demuxed], pid: Int) {
        let input = try MediaInput(path: path)
        let video = try #require(input.bestVideoStream)
        let packet = Packet()
        var packets: [Demuxed] = []
        while try input.read(into: packet) {
            guard packet.streamIndex == video.index else { continue }
            packets.append(Demuxed(pts: packet.pts, key: packet.isKey, position: try #require(packet.position), data: packet.withData { Array($0) }))
        }
        return (packets, video.containerID)
    }

    static let kinds: [(name: String, arguments: [String])] = [
        ("stretch-h264.ts", ["-t", "3", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-c:a", "aac", "-shortest"]),
        ("stretch-hevc.ts", ["-t", "3", "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "keyint=25:log-level=error",
                             "-c:a", "aac", "-shortest"]),
        ("stretch-h264.m2ts", ["-t", "3", "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-c:a", "aac", "-shortest",
                               "-f", "mpegts", "-mpegts_m2ts_mode", "1"]),
        ("stretch-mpeg2.mxf", ["-t", "3", "-c:v", "mpeg2video", "-g", "12", "-bf", "2", "-b:v", "5M", "-c:a", "pcm_s16le", "-ar", "48000"]),
    ]

    @Test(arguments: kinds.map(\.name))
    func aStretchGivesTheWholeDemuxsPackets(_ name: String) throws {
        let kind = try #require(Self.kinds.first { $0.name == name })
        let path = try Fixtures.media(name, Fixtures.lavfi + kind.arguments)
        let (whole, pid) = try Self.wholeDemux(path)
        let positions = whole.map(\.position)
        let object = try MemoryBytes(path)
        // From the start, from each keyframe after it, mid-GOP, and to the end of the file.
        let keys = whole.indices.filter { whole[$0].key && $0 > 0 }
        var tasks = [0...9, 30...44, (whole.count - 12)...(whole.count - 1)]
        tasks += keys.map { $0...min(whole.count - 1, $0 + 24) }
        for task in tasks {
            let stretch = DemuxedStretch.covering(task.lowerBound, task.upperBound, positions: positions, objectSize: object.size, stream: pid)
            object.reads = []
            let expected = whole[task].map { StretchDemux.Expected(pts: $0.pts, size: $0.data.count, key: $0.key) }
            let got = try StretchDemux.packets(from: object, name: name, stretch: stretch, expected: expected)
            #expect(got?.map(\.count) == whole[task].map(\.data.count) && got == whole[task].map(\.data), "\(name) packets \(task)")
            // The head (probe, program tables) and the stretch, and a little past it.
            let head = object.reads.filter { $0.upperBound <= stretch.bytes.lowerBound }.map(\.count).reduce(0, +)
            let after = object.reads.filter { $0.lowerBound >= stretch.bytes.upperBound }.map(\.count).reduce(0, +)
            #expect(head <= 256 << 10 && after <= 256 << 10, "\(name) \(task): \(head) bytes of head, \(after) past the stretch")
        }
    }

    /// A stretch that starts at the wrong packet, a packet of another size, or another first timestamp: refused.
    @Test func packetsNotAsProbedAreRefused() throws {
        let path = try Fixtures.media("stretch-h264.ts", Fixtures.lavfi + Self.kinds[0].arguments)
        let (whole, pid) = try Self.wholeDemux(path)
        let object = try MemoryBytes(path)
        let task = 25...40
        let expected = whole[task].map { StretchDemux.Expected(pts: $0.pts, size: $0.data.count, key: $0.key) }
        let late = DemuxedStretch.covering(task.lowerBound + 1, task.upperBound, positions: whole.map(\.position), objectSize: object.size, stream: pid)
        #expect(try StretchDemux.packets(from: object, name: path, stretch: late, expected: expected) == nil, "started after the first")
        let right = DemuxedStretch.covering(task.lowerBound, task.upperBound, positions: whole.map(\.position), objectSize: object.size, stream: pid)
        var sized = expected
        sized[5].size += 1
        #expect(try StretchDemux.packets(from: object, name: path, stretch: right, expected: sized) == nil, "a size")
        var timed = expected
        timed[0].pts? += 3600
        #expect(try StretchDemux.packets(from: object, name: path, stretch: right, expected: timed) == nil, "the first timestamp")
        var wrapped = expected
        wrapped[0].pts? += 1 << 33
        #expect(try StretchDemux.packets(from: object, name: path, stretch: right, expected: wrapped) != nil, "a wrap of the 33-bit clock")
    }
}
