/// A length of time as ffmpeg's options take one: seconds ("90", "1.5"), seconds with a unit ("500ms",
/// "90s"; also "10m" and "2h"), or "[HH:]MM:SS[.m]" ("10:00", "1:30:00"). Not negative.
public enum DurationText {
    /// The seconds `text` gives; nil when it is not a duration.
    public static func seconds(_ text: String) -> Double? {
        let text = text.lowercased()
        guard !text.isEmpty, !text.hasPrefix("-") else { return nil }
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count), let last = Double(parts[parts.count - 1]), last < 60 else { return nil }
            var whole = 0.0
            for (n, part) in parts.dropLast().enumerated() {
                guard !part.isEmpty, part.allSatisfy(\.isNumber), let value = Double(part) else { return nil }
                // Minutes under an hour's field stay under 60.
                guard n == 0 || value < 60 else { return nil }
                whole = whole * 60 + value
            }
            return whole * 60 + last
        }
        for (suffix, scale) in [("ms", 0.001), ("us", 0.000_001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)] where text.hasSuffix(suffix) {
            return number(String(text.dropLast(suffix.count))).map { $0 * scale }
        }
        return number(text)
    }

    private static func number(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
