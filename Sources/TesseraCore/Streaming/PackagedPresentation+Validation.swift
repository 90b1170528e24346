extension PackagedPresentation {
    /// Checks the presentation before any playlist is written: names each format can carry, positive sizes and
    /// durations, readable codec headers, and every rung cut at the same instants (within one tick of the coarser
    /// timescale), which rung switching needs. The first problem found is thrown, naming the rung and segment.
    public func validate() throws(PackagingError) {
        guard let reference = video.first else { throw PackagingError(.noVideo, "the presentation has no video rendition") }
        if let audio, let muxed = video.first(where: { $0.muxedAudio != nil }) {
            throw PackagingError(.audioMuxedAndSeparate, "rung \(muxed.name) carries audio and the presentation has the audio rendition \(audio.name) too")
        }
        var names: Set<String> = [], directories: Set<String> = []
        for rung in video {
            try Self.check(token: rung.name, what: "rung name")
            try Self.check(path: rung.directory, what: "rung \(rung.name)'s folder", allowSlash: true)
            guard names.insert(rung.name).inserted else { throw PackagingError(.duplicateName, "two rungs are named \(rung.name)") }
            guard directories.insert(rung.directory).inserted else {
                throw PackagingError(.duplicateName, "rung \(rung.name) shares the folder \(rung.directory) with another rendition")
            }
            try rung.validate()
        }
        if let audio {
            try Self.check(quoted: audio.name, what: "audio name")
            try Self.check(token: audio.groupID, what: "audio group id")
            try Self.check(path: audio.directory, what: "the audio folder", allowSlash: true)
            if let language = audio.language, language.isEmpty || !language.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
                throw PackagingError(.invalidName, "audio language \"\(language)\" is not a BCP 47 tag")
            }
            guard directories.insert(audio.directory).inserted else {
                throw PackagingError(.duplicateName, "the audio rendition shares the folder \(audio.directory) with a rung")
            }
            try audio.format.validate(label: "audio \(audio.name)")
            try audio.track.validate(label: "audio \(audio.name)")
        }
        for rung in video.dropFirst() { try Self.checkAlignment(rung, against: reference) }
    }

    /// Same segment count, and every segment start (and the end) within one tick of the reference rung's.
    private static func checkAlignment(_ rung: VideoRendition, against reference: VideoRendition) throws(PackagingError) {
        let a = rung.track, b = reference.track
        guard a.segments.count == b.segments.count else {
            throw PackagingError(.segmentCountMismatch, "rung \(rung.name) has \(a.segments.count) segments and \(reference.name) has "
                                 + "\(b.segments.count): every rung must be cut at the same keyframes")
        }
        let tolerance = Int128(max(a.timescale, b.timescale))
        var startA = a.startTicks, startB = b.startTicks
        for index in 0...a.segments.count {
            // |startA / a.timescale - startB / b.timescale| <= 1 / min(timescales), cross-multiplied.
            if abs(Int128(startA) * Int128(b.timescale) - Int128(startB) * Int128(a.timescale)) > tolerance {
                let atA = StreamingTime.seconds(startA, timescale: a.timescale), atB = StreamingTime.seconds(startB, timescale: b.timescale)
                let which = index == a.segments.count ? "ends at \(atA) s" : "segment \(index + 1) (\(a.fileName(index))) starts at \(atA) s"
                throw PackagingError(.misalignedSegment, "rung \(rung.name): \(which), \(reference.name) at \(atB) s: keyframes must be at the same instants in every rung")
            }
            guard index < a.segments.count else { break }
            startA += a.segments[index].duration
            startB += b.segments[index].duration
        }
    }

    /// An id (DASH Representation@id, HLS GROUP-ID): no white space, control characters or double quotes.
    static func check(token: String, what: String) throws(PackagingError) {
        guard !token.isEmpty, token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && $0 != "\"" }) else {
            throw PackagingError(.invalidName, "\(what) \"\(token)\" must be non-empty, without spaces, control characters or quotes")
        }
    }

    /// An HLS quoted-string: no double quote, carriage return or line feed (RFC 8216 4.2); nor other controls.
    static func check(quoted text: String, what: String) throws(PackagingError) {
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F && $0 != "\"" }) else {
            throw PackagingError(.invalidName, "\(what) \"\(text)\" must be non-empty, without quotes or control characters")
        }
    }

    /// A relative URI path written as is: RFC 3986 pchar without ':' (a first segment with a colon reads as a
    /// scheme), '/' only between folders, no "." or ".." segment.
    static func check(path: String, what: String, allowSlash: Bool) throws(PackagingError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=@")
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, allowSlash || parts.count == 1,
              parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && $0.allSatisfy(allowed.contains) }) else {
            throw PackagingError(.invalidName, "\(what) \"\(path)\" must be a relative path of letters, digits and -._~!$&'()*+,;=@")
        }
    }
}

extension VideoRendition {
    func validate() throws(PackagingError) {
        guard width > 0, height > 0, frameRate.isValid, sampleAspectRatio.isValid else {
            throw PackagingError(.invalidRendition, "rung \(name): size \(width)x\(height), frame rate \(frameRate) and aspect ratio \(sampleAspectRatio) must be positive")
        }
        do throws(PackagingError) { _ = try codecString() } catch {
            throw PackagingError(.invalidCodecConfiguration, "rung \(name): \(error.description)")
        }
        try muxedAudio?.validate(label: "rung \(name)'s audio")
        try track.validate(label: "rung \(name)")
    }
}

extension AudioFormat {
    func validate(label: String) throws(PackagingError) {
        guard objectType > 0, channels > 0, sampleRate > 0 else {
            throw PackagingError(.invalidRendition, "\(label): object type \(objectType), \(channels) channels and \(sampleRate) Hz must be positive")
        }
    }
}

extension MediaTrack {
    func validate(label: String) throws(PackagingError) {
        guard timescale > 0, startTicks >= 0 else {
            throw PackagingError(.invalidRendition, "\(label): timescale \(timescale) must be positive and start \(startTicks) not negative")
        }
        guard !segments.isEmpty else { throw PackagingError(.emptyRendition, "\(label) has no media segment") }
        try PackagedPresentation.check(path: initialization, what: "\(label)'s init segment", allowSlash: false)
        guard naming.firstNumber >= 0, (0...12).contains(naming.digits) else {
            throw PackagingError(.invalidName, "\(label): segment numbers from \(naming.firstNumber), \(naming.digits) digits")
        }
        try PackagedPresentation.check(path: naming.fileName(0), what: "\(label)'s segment name", allowSlash: false)
        for (index, segment) in segments.enumerated() {
            guard segment.duration > 0, segment.byteSize > 0 else {
                throw PackagingError(.invalidSegment, "\(label): segment \(index + 1) (\(fileName(index))) lasts \(segment.duration) ticks and has \(segment.byteSize) bytes")
            }
            if let range = segment.iFrame, range.offset < 0 || range.length <= 0 || range.offset + range.length > segment.byteSize {
                throw PackagingError(.invalidSegment, "\(label): segment \(index + 1) (\(fileName(index))) I-frame bytes \(range.length)@\(range.offset) lie outside its \(segment.byteSize) bytes")
            }
        }
    }
}
