/// A rendition ladder (`--ladder 1080,720:3M,480,360`): the heights to encode from one source, each with an
/// optional peak rate. Rungs keep the order given (the order of the master playlist later).
///
/// A rung names the picture's *shorter* side, as players and sites name renditions: on a portrait phone video
/// `720` makes 720x1280, the same rung a landscape source makes 1280x720. Heights must be even (4:2:0 video)
/// and are refused, not rounded, when odd: a ladder is written once and should say exactly what it makes.
public struct Ladder: Codable, Hashable, Sendable, CustomStringConvertible {
    public var rungs: [Rung]

    /// The tallest rung accepted: 8K UHD's 4320 rows.
    public static let maximumHeight = 4320
    /// The most rungs one ladder may have.
    public static let maximumRungs = 16
    /// The lowest peak rate a rung may name: x264 takes its VBV rates in whole kbit/s.
    public static let minimumRate = 16_000

    public struct Rung: Codable, Hashable, Sendable, CustomStringConvertible {
        /// Rows of a landscape picture, columns of a portrait one: the shorter side.
        public var height: Int
        /// Peak rate in bits per second (capped CRF's `maxrate`), or with `--two-pass` the average; nil takes the
        /// default cap.
        public var peakRate: Int?

        public init(height: Int, peakRate: Int? = nil) {
            self.height = height
            self.peakRate = peakRate
        }

        /// The rung's name in outputs: `720p`.
        public var name: String { "\(height)p" }

        /// As written on the command line: `720` or `720:3M`.
        public var description: String { peakRate.map { "\(height):\(Self.rateText($0))" } ?? String(height) }

        /// Bits per second written the short way: 3000000 → 3M, 2500000 → 2500k.
        static func rateText(_ rate: Int) -> String {
            rate % 1_000_000 == 0 ? "\(rate / 1_000_000)M" : rate % 1000 == 0 ? "\(rate / 1000)k" : String(rate)
        }
    }

    /// A checked ladder: at least one rung, each even, positive and at most `maximumHeight`, no height twice.
    public init(_ rungs: [Rung]) throws(LadderError) {
        guard !rungs.isEmpty else { throw LadderError(.empty, "--ladder is empty (give heights, e.g. 1080,720,480,360)") }
        guard rungs.count <= Self.maximumRungs else {
            throw LadderError(.tooManyRungs, "--ladder has \(rungs.count) rungs; at most \(Self.maximumRungs)")
        }
        var seen = Set<Int>()
        for rung in rungs {
            try Self.check(rung)
            guard seen.insert(rung.height).inserted else {
                throw LadderError(.duplicate, "--ladder gives \(rung.height) twice")
            }
        }
        self.rungs = rungs
    }

    /// Parses the option's text: rungs separated by commas.
    public init(parsing text: String) throws(LadderError) {
        try self.init(items: [text])
    }

    /// Parses a settings file's list: each item a height (`720`, `720p`) or `HEIGHT:RATE` (`720:3M`), or
    /// several separated by commas.
    public init(items: [String]) throws(LadderError) {
        let texts = items.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        guard texts.contains(where: { !$0.trimmingSpaces.isEmpty }) else {
            throw LadderError(.empty, "--ladder is empty (give heights, e.g. 1080,720,480,360)")
        }
        var rungs: [Rung] = []
        for text in texts { rungs.append(try Self.rung(text)) }
        try self.init(rungs)
    }

    /// One rung from its text; the rate is read as `--bitrate` reads it.
    static func rung(_ item: String) throws(LadderError) -> Rung {
        let text = item.trimmingSpaces
        guard !text.isEmpty else { throw LadderError(.notAHeight, "--ladder has an empty rung (heights separated by commas, e.g. 1080,720)") }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var heightText = parts[0].trimmingSpaces
        if heightText.lowercased().hasSuffix("p") { heightText.removeLast() }
        guard let height = Int(heightText) else {
            throw LadderError(.notAHeight, "--ladder rung '\(text)' is not a height (e.g. 720 or 720:3M)")
        }
        guard parts.count == 2 else { return Rung(height: height) }
        let rateText = String(parts[1])
        let rate: Int
        do {
            rate = try EncodingRequest.parseRate(rateText, "--ladder")
        } catch {
            throw LadderError(.badRate, "--ladder rung '\(text)' has no rate in '\(rateText)' (e.g. 720:3M or 720:2500k)")
        }
        return Rung(height: height, peakRate: rate)
    }

    static func check(_ rung: Rung) throws(LadderError) {
        guard rung.height > 0 else { throw LadderError(.notPositive, "--ladder rung \(rung.height) is not a positive height") }
        guard rung.height % 2 == 0 else {
            throw LadderError(.oddHeight, "--ladder rung \(rung.height) is odd; 4:2:0 video needs even sizes (\(rung.height - 1) or \(rung.height + 1))")
        }
        guard rung.height <= maximumHeight else {
            throw LadderError(.tooTall, "--ladder rung \(rung.height) is taller than \(maximumHeight) rows")
        }
        if let rate = rung.peakRate, rate < minimumRate {
            throw LadderError(.badRate, "--ladder rung \(rung) has a rate below \(Rung.rateText(minimumRate))")
        }
    }

    /// As written on the command line: `1080,720:3M,480`.
    public var description: String { rungs.map(\.description).joined(separator: ",") }

    /// Stored as its list of rungs; a stored ladder is checked again when read.
    public init(from decoder: Decoder) throws {
        let rungs = try decoder.singleValueContainer().decode([Rung].self)
        do {
            try self.init(rungs)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rungs)
    }
}

/// Why a ladder is refused; `code` tells the cases apart, `description` is one line for the user.
public struct LadderError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case empty, tooManyRungs, notAHeight, notPositive, oddHeight, tooTall, badRate, duplicate
            case conflictingOption, exceedsLevel, beyondLevels
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// No rung at all.
        public static let empty = Code(.empty)
        public static let tooManyRungs = Code(.tooManyRungs)
        /// A rung that is not a number (`abc`), or an empty one.
        public static let notAHeight = Code(.notAHeight)
        /// Zero or a negative height.
        public static let notPositive = Code(.notPositive)
        public static let oddHeight = Code(.oddHeight)
        /// Above `Ladder.maximumHeight`.
        public static let tooTall = Code(.tooTall)
        /// A rate that does not parse, is not positive or is below `Ladder.minimumRate`.
        public static let badRate = Code(.badRate)
        /// The same height twice.
        public static let duplicate = Code(.duplicate)
        /// An option that a ladder replaces (`--size`, `--max-size`, `--bitrate`, `--maxrate`, `--bufsize`).
        public static let conflictingOption = Code(.conflictingOption)
        /// A rung beyond the level pinned with `--level`.
        public static let exceedsLevel = Code(.exceedsLevel)
        /// A rung beyond every H.264 level.
        public static let beyondLevels = Code(.beyondLevels)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
