import TesseraCore

extension JobPlan {
    /// The output video stream's codec parameters around the encoder's SPS/PPS: what a muxer of the encoded
    /// segments (one MP4, or CMAF fragments) declares for the stream.
    public func videoParameters(extradata: [UInt8]) -> CodecParameters {
        let codec = settings.videoCodec
        var params = CodecParameters(codecName: codec.rawValue)
        // Apple's players take HEVC only as `hvc1` (headers in the sample entry); libavformat writes `hev1` unless told.
        if codec == .hevc { params.codecTag = CodecParameters.tag("hvc1") }
        params.extradata = extradata
        params.pixelFormat = output.pixelFormat
        params.width = output.width
        params.height = output.height
        params.sampleAspectRatio = output.sampleAspectRatio
        params.colorRange = output.colorRange
        params.colorPrimaries = output.colorPrimaries
        params.colorTransfer = output.colorTransfer
        params.colorSpace = output.colorSpace
        params.chromaLocation = output.chromaLocation
        // x265's B-pyramid reorders two frames deep; SVT-AV1's frames come out in display order.
        params.videoDelay = settings.effectiveBFrames == 0 ? 0 : codec == .hevc && settings.effectiveBFrames > 1 ? 2 : 1
        return params
    }
}
