import FFmpegKit
import TesseraCore

/// The order a decoder shows the video's pictures in, learnt by decoding them with each packet's index for its
/// pts: what the probe asks when the demuxer left pictures without a pts (`PresentationTimes`). Only then is the
/// video decoded at probe time (without its loop filter: the pictures are not looked at), on one thread as the
/// workers decode, so that a decoder guessing its reordering depth shows the same pictures.
enum DisplayOrder {
    /// Packet indices in display order, as tagged (`PresentationTimes.fill` keeps those in range, once each); a picture
    /// the decoder cannot show is left out.
    static func decode(_ input: MediaInput, stream: Int, packets expected: Int) throws(FFmpegError) -> [Int] {
        try input.seekToStart()
        let decoder = try Decoder(input: input, streamIndex: stream)
        decoder.skipLoopFilter()
        let packet = Packet(), frame = Frame()
        var order: [Int] = []
        func drain() throws(FFmpegError) {
            while try decoder.receive(frame) == .ready {
                defer { frame.unref() }
                if let tag = frame.packetPTS { order.append(Int(tag)) }
            }
        }
        var index = 0
        while try input.read(into: packet) {
            guard packet.streamIndex == stream else { continue }
            packet.pts = Int64(index)
            packet.dts = nil
            index += 1
            do {
                while try decoder.send(packet) == .needsInput { try drain() }
            } catch where error.isInvalidData {
                continue  // a damaged picture is not shown, and the plan leaves it out
            }
            try drain()
        }
        guard index == expected else { throw FFmpegError("read \(index) video packets, the first pass \(expected)", call: "DisplayOrder") }
        _ = try decoder.send(nil)
        try drain()
        return order
    }
}
