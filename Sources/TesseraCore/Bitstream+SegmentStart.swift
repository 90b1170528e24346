/// Whether a coded picture is one a decoder can start from: an IDR (H.264 NAL type 5, HEVC 19 or 20), or in AV1
/// a shown key frame with its sequence header in the same temporal unit. A CRA, a recovery-point I-frame or an AV1
/// forward key frame is not: the pictures around it may need what came before.
public enum SegmentStart {
    /// - Parameters:
    ///   - codec: the stream's codec.
    ///   - extradata: its avcC/hvcC (the NAL length size) or Annex B headers.
    public static func isDecoderStart(_ data: UnsafeRawBufferPointer, codec: VideoCodec, extradata: [UInt8]) -> Bool {
        switch codec {
        case .h264, .hevc:
            let classifier = RandomAccessClassifier(codecName: codec.rawValue, intraOnly: false, extradata: extradata)
            return classifier.classify(data, keyFlag: false) == .idr
        case .av1:
            return av1KeyFrameWithSequenceHeader(data)
        }
    }

    /// Walks the temporal unit's OBUs (AV1 spec 5.3): a sequence header (type 1), then a frame header or frame
    /// (3 or 6) that is not `show_existing_frame` and has `frame_type` KEY_FRAME and `show_frame` set.
    static func av1KeyFrameWithSequenceHeader(_ data: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        var sequenceHeader = false
        while offset < data.count {
            let header = data[offset]
            let type = (header >> 3) & 0xF
            let hasExtension = header & 0x4 != 0
            let hasSize = header & 0x2 != 0
            var position = offset + 1 + (hasExtension ? 1 : 0)
            var size = data.count - position
            if hasSize {
                guard let (value, length) = leb128(data, at: position) else { return false }
                size = value
                position += length
            }
            guard position + size <= data.count else { return false }
            switch type {
            case 1:
                sequenceHeader = true
            case 3, 6:
                // Video sequences have no reduced still-picture header: show_existing_frame, frame_type (2), show_frame.
                guard size > 0 else { return false }
                let first = data[position]
                let showExisting = first & 0x80 != 0
                let frameType = (first >> 5) & 0x3
                let shown = first & 0x10 != 0
                return sequenceHeader && !showExisting && frameType == 0 && shown
            default:
                break
            }
            offset = position + size
        }
        return false
    }

    static func leb128(_ data: UnsafeRawBufferPointer, at start: Int) -> (Int, Int)? {
        var value = 0
        for i in 0..<8 {
            guard start + i < data.count else { return nil }
            let byte = data[start + i]
            value |= Int(byte & 0x7F) << (7 * i)
            if byte & 0x80 == 0 { return (value, i + 1) }
        }
        return nil
    }
}
