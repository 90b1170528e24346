import TesseraCore

extension JobPlan {
    /// The output video stream's codec parameters around the encoder's SPS/PPS: what a muxer of the encoded
    /// segments (one MP4, or CMAF fragments) declares for the stream.
    public func videoParameters(extradata: [UInt8]) -> CodecParameters {
        var params = CodecParameters(codecName: "h264")
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
        params.videoDelay = settings.effectiveBFrames > 0 ? 1 : 0
        return params
    }
}
