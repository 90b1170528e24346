import TesseraCore

extension JobPlan {
    /// The transfer functions of HDR video (CICP): SMPTE ST 2084 (PQ, HDR10) and ARIB STD-B67 (HLG).
    static let hdrTransfers: [Int32: String] = [16: "PQ", 18: "HLG"]

    /// One line for the user when an HDR source is made 8-bit (a rung or the output): its tags are kept, but 8 bits
    /// band in HDR's range, and ffmpeg would have kept 10. Nil when the source is not HDR or every output keeps 10 bits.
    public var hdrNotice: String? {
        guard let name = Self.hdrTransfers[probe.video.parameters.colorTransfer],
              (0..<rungCount).contains(where: { !forRung($0).settings.tenBit }) else { return nil }
        let profile = settings.videoCodec == .h264 ? "high10" : "main10"
        return "\(inputPath): HDR (\(name)) video made 8-bit, which bands; give --profile \(profile) to keep its 10 bits"
    }
}
