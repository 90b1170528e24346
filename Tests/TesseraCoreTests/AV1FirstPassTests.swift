import Foundation
import Testing
@testable import TesseraCore

struct AV1FirstPassTests {
    /// A segment of `seconds` whose bytes at CRF c are `base`·e^(−slope·c), measured at `anchors`.
    static func segment(seconds: Double, base: Double, slope: Double, anchors: [Int] = [27, 33]) -> AV1FirstPass {
        AV1FirstPass(seconds: seconds, bytes: Dictionary(uniqueKeysWithValues: anchors.map { ($0, Int(base * exp(-slope * Double($0)))) }))
    }

    @Test func theTextRoundTripsAndBadTextIsRefused() throws {
        let pass = AV1FirstPass(seconds: 2.5, bytes: [27: 120_000, 33: 80_000])
        #expect(try AV1FirstPass(parsing: pass.text) == pass)
        for bad in ["", "#options: 640x272 fps=25/1", "#av1-first-pass seconds=2.5 crf27=1000", "#av1-first-pass crf27=1000 crf33=900",
                    "#av1-first-pass seconds=2.5 crf27=1000 crf33=x", "#av1-first-pass seconds=0 crf27=1000 crf33=900"] {
            #expect(throws: TwoPassError.self, "\(bad)") { try AV1FirstPass(parsing: bad) }
        }
    }

    @Test func sizesAreReadLogLinearlyBetweenAndBeyondTheMeasuredCRFs() {
        let pass = AV1FirstPass(seconds: 1, bytes: [10: 800_000, 30: 200_000, 50: 25_000])
        #expect(abs(pass.predictedBytes(atCRF: 30) - 200_000) < 1e-6)
        #expect(abs(pass.predictedBytes(atCRF: 20) - 400_000) < 1e-6, "halfway in the logarithm")
        #expect(abs(pass.predictedBytes(atCRF: 40) - sqrt(200_000 * 25_000)) < 1e-6, "the nearer pair's slope")
        #expect(abs(pass.predictedBytes(atCRF: 60) - 25_000 / 8.0.squareRoot()) < 1e-3, "beyond: the last pair's slope")
        #expect(pass.crf(forBitrate: 200_000 * 8) == 30 && pass.crf(forBitrate: 390_000 * 8) == 20)
    }

    @Test func anchorsStayInsideSVTsRange() {
        #expect(AV1FirstPass.anchors(around: 30) == [27, 33])
        #expect(AV1FirstPass.anchors(around: 1) == [1, 7] && AV1FirstPass.anchors(around: 63) == [57, 63])
        #expect(AV1FirstPass.probePreset(forJobPreset: "10") == "12" && AV1FirstPass.probePreset(forJobPreset: "13") == "13")
    }

    /// One CRF for the file, each segment on either side of it: the predicted total is the budget's nearest, and each
    /// segment's bitrate names its CRF back to its worker.
    @Test func theFileGetsOneQualityAndItsBudget() throws {
        let segments = [Self.segment(seconds: 2.5, base: 4e6, slope: 0.09), Self.segment(seconds: 2.5, base: 9e6, slope: 0.11),
                        Self.segment(seconds: 4, base: 2e6, slope: 0.07), Self.segment(seconds: 1, base: 6e6, slope: 0.1)]
        let bitrate = 300_000
        let result = try BitAllocation.allocate(av1: segments, bitrate: bitrate)
        let crfs = zip(segments, result.bitrates).map { $0.crf(forBitrate: $1) }
        #expect(Set(crfs).count <= 2 && crfs.max()! - crfs.min()! <= 1, "\(crfs)")
        #expect(crfs.allSatisfy { abs(Double($0) - result.rateFactor) <= 1 }, "\(crfs) around \(result.rateFactor)")
        let budget = Double(bitrate) * 10
        let predicted = zip(segments, crfs).reduce(0.0) { $0 + $1.0.predictedBytes(atCRF: Double($1.1)) * 8 }
        #expect(abs(result.budgets.reduce(0, +) - predicted) < 1)
        // Nearer than any one segment's step between the two CRFs.
        let lo = Double(crfs.min()!), steps = segments.map { ($0.predictedBytes(atCRF: lo) - $0.predictedBytes(atCRF: lo + 1)) * 8 }
        #expect(abs(predicted - budget) <= steps.max()!, "\(predicted) for \(budget)")
        #expect(abs(predicted / budget - 1) < 0.05)
    }

    @Test func aBudgetBelowTheHighestCRFIsRefused() {
        let segments = [Self.segment(seconds: 2, base: 4e6, slope: 0.05)]
        #expect(throws: TwoPassError.self) { try BitAllocation.allocate(av1: segments, bitrate: 1000) }
        #expect(throws: TwoPassError.self) { try BitAllocation.allocate(av1: [], bitrate: 1000) }
    }
}
