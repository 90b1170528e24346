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
