/// The steps between pictures shown one after another.
public enum PictureSteps {
    /// The median step of pictures' pts in display order (`sorted`); nil with fewer than two.
    public static func usual(_ sorted: [Int64]) -> Int64? {
        guard sorted.count >= 2 else { return nil }
        let steps = zip(sorted, sorted.dropFirst()).map { $1 - $0 }.sorted()
        return steps[steps.count / 2]
    }
}
