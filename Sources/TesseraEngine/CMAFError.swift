/// A refusal or failure of the CMAF writer: a code to decide on, and one line naming the problem.
public struct CMAFError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Codable, Sendable {
        /// A cut time is not the presentation time of an IDR picture (or a picture shows before the IDR it follows).
        case cutNotOnIDR
        /// Cut times do not rise strictly, or lie outside the video.
        case badCuts
        /// A segment's SPS/PPS differ from the stream's, or it is not the segment expected in its place.
        case segmentMismatch
        /// Timestamps that cannot be muxed (missing, decreasing, or before the timeline's origin).
        case badTimestamps
        /// libavformat refused the stream or a packet.
        case muxing
        /// A file could not be written.
        case writing
        /// A written segment does not read back as expected (no moof, no sync sample first, decode-time gap).
        case malformedSegment
    }

    public let code: Code
    public let subject: String
    public let problem: String

    public init(_ code: Code, _ subject: String, _ problem: String) {
        self.code = code
        self.subject = subject
        self.problem = problem
    }

    public var description: String { subject.isEmpty ? problem : "\(subject): \(problem)" }
}
