// Shared with the libFuzzer harnesses (fuzz/run compiles this file into them).

/// How a fuzz input becomes the frames of one ZeroMQ message.
///
///     count:u8 { length:u16le frame[length] }*(count-1) lastFrame[rest]
///
/// `count & 3` is the number of frames (0...3; a real message has 1 or 2). Every frame but the last has
/// a length prefix, cut short at the end of the input; the last frame takes the rest, so a payload blob
/// at the end can be mutated without fixing a length.
enum FuzzFrames {
    static func split(_ data: UnsafeRawBufferPointer) -> [[UInt8]] {
        guard let first = data.first else { return [] }
        let count = Int(first & 3)
        var frames: [[UInt8]] = []
        var offset = 1
        for i in 0..<count {
            if i == count - 1 {
                frames.append(Array(data[min(offset, data.count)...]))
            } else {
                var length = 0
                if offset < data.count { length |= Int(data[offset]) }
                if offset + 1 < data.count { length |= Int(data[offset + 1]) << 8 }
                offset = min(offset + 2, data.count)
                let end = min(offset + length, data.count)
                frames.append(Array(data[offset..<end]))
                offset = end
            }
        }
        return frames
    }

    /// The input `split` turns back into `frames` (every frame but the last at most 65535 bytes).
    static func join(_ frames: [[UInt8]]) -> [UInt8] {
        precondition(frames.count <= 3 && frames.dropLast().allSatisfy { $0.count <= 0xFFFF })
        var out: [UInt8] = [UInt8(frames.count)]
        for (i, frame) in frames.enumerated() {
            if i < frames.count - 1 { out += [UInt8(frame.count & 0xFF), UInt8(frame.count >> 8)] }
            out += frame
        }
        return out
    }
}
