/// Boxes with their places, and the chunk offsets of a `moov` moved with the media they point at: what a reserved
/// index of another size changes in a file whose media is otherwise the same (`ObjectStitch`).
extension MP4Layout {
    public struct Box: Equatable, Sendable {
        public var type: String
        public var offset: Int
        public var size: Int
        public var headerSize: Int
    }

    /// The boxes one after another in `bytes[range]`; stops at the first header that does not fit.
    public static func boxes(in bytes: [UInt8], _ range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = Int(bigEndian(bytes, offset, 4))
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { break }
                size = Int(bigEndian(bytes, offset + 8, 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header else { break }
            found.append(Box(type: String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset: offset, size: size, headerSize: header))
            offset += size
        }
        return found
    }

    /// `moov` with every chunk offset (`stco`, `co64`) of every track moved by `delta`. Nil when a box is cut short
    /// or an offset would leave its field's range.
    public static func movingChunkOffsets(ofMoov moov: [UInt8], by delta: Int64) -> [UInt8]? {
        var patched = moov
        guard let top = boxes(in: moov, 0..<moov.count).first, top.type == "moov", top.size == moov.count,
              move(in: &patched, top, by: delta) else { return nil }
        return patched
    }

    private static let containers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl"]

    private static func move(in bytes: inout [UInt8], _ box: Box, by delta: Int64) -> Bool {
        let body = box.offset + box.headerSize..<box.offset + box.size
        guard body.upperBound <= bytes.count else { return false }
        if containers.contains(box.type) {
            return boxes(in: bytes, body).allSatisfy { move(in: &bytes, $0, by: delta) }
        }
        guard box.type == "stco" || box.type == "co64" else { return true }
        let width = box.type == "stco" ? 4 : 8
        guard body.count >= 8 else { return false }
        let count = Int(bigEndian(bytes, body.lowerBound + 4, 4))
        guard body.count >= 8 + count * width else { return false }
        let limit: Int64 = width == 4 ? Int64(UInt32.max) : Int64.max
        for entry in 0..<count {
            let at = body.lowerBound + 8 + entry * width
            let moved = Int64(bigEndian(bytes, at, width)) + delta
            guard moved >= 0, moved <= limit else { return false }
            for k in 0..<width { bytes[at + k] = UInt8(truncatingIfNeeded: moved >> (8 * (width - 1 - k))) }
        }
        return true
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        bytes[at..<at + width].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
