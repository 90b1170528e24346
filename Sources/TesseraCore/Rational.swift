/// An exact fraction, as FFmpeg's time bases and frame rates are.
public struct Rational: Codable, Hashable, Sendable, CustomStringConvertible {
    public var num: Int32
    public var den: Int32

    public init(_ num: Int32, _ den: Int32) {
        self.num = num
        self.den = den
    }

    public var isValid: Bool { num > 0 && den > 0 }
    public var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
    public var inverse: Rational { Rational(den, num) }
    public var description: String { "\(num)/\(den)" }

    /// Seconds for `ticks` of this time base.
    public func seconds(_ ticks: Int64) -> Double { Double(ticks) * Double(num) / Double(den) }

    /// Rescales `value` from this time base to `other`, rounding to nearest (as av_rescale_q does).
    public func rescale(_ value: Int64, to other: Rational) -> Int64 {
        // value * num * other.den / (den * other.num), in 128-bit to avoid overflow.
        let numerator = Int128(value) * Int128(num) * Int128(other.den)
        let denominator = Int128(den) * Int128(other.num)
        let half = denominator / 2
        let rounded = numerator >= 0 ? (numerator + half) / denominator : (numerator - half) / denominator
        return Int64(clamping: rounded)
    }
}

extension Rational {
    /// Rescales `value` from this time base to `other`, rounding up: the first tick of `other` at or
    /// after the instant `value`.
    public func rescaleUp(_ value: Int64, to other: Rational) -> Int64 {
        let numerator = Int128(value) * Int128(num) * Int128(other.den)
        let denominator = Int128(den) * Int128(other.num)
        let quotient = numerator / denominator
        let ceiling = numerator % denominator > 0 ? quotient + 1 : quotient
        return Int64(clamping: ceiling)
    }

    /// "30", "29.97", "30000/1001", "25/1" → a frame rate; the NTSC decimals map to their exact x/1001 rates.
    public init?(frameRate text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let n = Int32(parts[0]), let d = Int32(parts[1]), n > 0, d > 0 else { return nil }
            self.init(n, d)
            return
        }
        guard parts.count == 1, let value = Double(text), value > 0, value <= 1000 else { return nil }
        for base in [24.0, 30, 48, 60, 120] where abs(value - base * 1000 / 1001) < 0.006 {
            self.init(Int32(base * 1000), 1001)
            return
        }
        let scaled = (value * 1000).rounded()
        guard abs(scaled - value * 1000) < 1e-6 else { return nil }
        var a = Int32(scaled), b: Int32 = 1000
        while b != 0 { (a, b) = (b, a % b) }
        self.init(Int32(scaled) / a, 1000 / a)
    }
}
