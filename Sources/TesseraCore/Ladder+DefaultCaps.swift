extension Ladder {
    /// The default peak rate of a rung that names none, in bits per second, for a picture of `pixels`.
    ///
    /// Derived from the example H.264 ladder (16:9, 30 fps) in Apple's "HLS Authoring Specification for Apple
    /// Devices": 416x234 145 kb/s, 640x360 365, 768x432 730 and 1100, 960x540 2000, 1280x720 3000 and 4500,
    /// 1920x1080 6000 and 7800. Those are average rates; a rung is capped CRF, whose average falls below its
    /// cap, so the cap takes the higher of two rates at one size. Between two sizes the cap is interpolated
    /// linearly in pixel count; outside the table it keeps the nearest entry's bits per pixel. The frame rate
    /// is not taken into account. Rounded to whole kbit/s, as x264 takes VBV rates.
    public static func defaultPeakRate(pixels: Int) -> Int {
        let table = defaultCapTable
        let kbps: Double
        if pixels <= table[0].pixels {
            kbps = Double(table[0].kbps) * Double(pixels) / Double(table[0].pixels)
        } else if let upper = table.firstIndex(where: { $0.pixels >= pixels }) {
            let low = table[upper - 1], high = table[upper]
            let fraction = Double(pixels - low.pixels) / Double(high.pixels - low.pixels)
            kbps = Double(low.kbps) + fraction * Double(high.kbps - low.kbps)
        } else {
            let top = table[table.count - 1]
            kbps = Double(top.kbps) * Double(pixels) / Double(top.pixels)
        }
        return max(minimumRate / 1000, Int(kbps.rounded())) * 1000
    }

    /// Apple's example sizes and the cap taken from each (kb/s), smallest first.
    static let defaultCapTable: [(pixels: Int, kbps: Int)] = [
        (416 * 234, 145), (640 * 360, 365), (768 * 432, 1100), (960 * 540, 2000), (1280 * 720, 4500), (1920 * 1080, 7800),
    ]
}
