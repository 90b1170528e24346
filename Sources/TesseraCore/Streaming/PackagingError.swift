/// Why a packaged presentation cannot be described by playlists or a manifest: a code to decide by, and one line
/// that names the rung, the segment and the problem.
public struct PackagingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong; a struct over a private enum so that cases can be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case noVideo, invalidName, duplicateName, invalidRendition, emptyRendition, invalidSegment
            case segmentCountMismatch, misalignedSegment, invalidCodecConfiguration, audioMuxedAndSeparate
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The presentation has no video rendition.
        public static let noVideo = Code(.noVideo)
        /// A name, folder or file name has a character a playlist URI, quoted string or XML id cannot carry.
        public static let invalidName = Code(.invalidName)
        /// Two renditions share a name or a folder.
        public static let duplicateName = Code(.duplicateName)
        /// A size, frame rate, timescale, channel count or sample rate is not positive.
        public static let invalidRendition = Code(.invalidRendition)
        /// A rendition has no media segment.
        public static let emptyRendition = Code(.emptyRendition)
        /// A segment's duration or size is not positive, or its I-frame byte range lies outside it.
        public static let invalidSegment = Code(.invalidSegment)
        /// Two video rungs have different numbers of segments.
        public static let segmentCountMismatch = Code(.segmentCountMismatch)
        /// A video rung's segment starts (or the rung ends) at another time than the first rung's.
        public static let misalignedSegment = Code(.misalignedSegment)
        /// An avcC record, SPS or AudioSpecificConfig cannot be read.
        public static let invalidCodecConfiguration = Code(.invalidCodecConfiguration)
        /// Audio is both muxed into the rungs and given as its own rendition.
        public static let audioMuxedAndSeparate = Code(.audioMuxedAndSeparate)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
