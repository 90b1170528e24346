import TesseraCore

extension LadderSource {
    /// The probed video's geometry, turned as the job's picture settings turn it (as `OutputPicture` does);
    /// `fps` is the output frame rate the plan settles on.
    public init(_ probe: ProbeResult, picture: PictureSettings, fps: Double) {
        let video = probe.video
        self.init(width: video.width, height: video.height, sampleAspectRatio: video.parameters.sampleAspectRatio,
                  rotation: video.rotation, picture: picture, fps: fps)
    }
}
