/// Reads the top-level box order of an MP4 file, to check that moov comes before mdat (faststart).
public enum MP4Layout {
    /// Top-level box types in file order, from the first bytes of each box header.
    /// `readAt(offset, count)` returns up to `count` bytes at `offset` (fewer at end of file).
    public static func topLevelBoxes(fileSize: Int64, readAt: (Int64, Int) -> [UInt8]) -> [String] {
        var boxes: [String] = []
        var offset: Int64 = 0
        while offset + 8 <= fileSize, boxes.count < 10_000 {
            let head = readAt(offset, 16)
            guard head.count >= 8 else { break }
            var size = Int64(head[0]) << 24 | Int64(head[1]) << 16 | Int64(head[2]) << 8 | Int64(head[3])
            let type = String(decoding: head[4..<8], as: UTF8.self)
            if size == 1, head.count >= 16 {
                size = head[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            } else if size == 0 {
                size = fileSize - offset
            }
            boxes.append(type)
            guard size >= 8 else { break }
            offset += size
        }
        return boxes
    }

    public static func isFaststart(_ boxes: [String]) -> Bool {
        guard let moov = boxes.firstIndex(of: "moov"), let mdat = boxes.firstIndex(of: "mdat") else { return false }
        return moov < mdat
    }
}
