import Foundation
import Testing
@testable import TesseraCore

/// The fuzzers' committed inputs through the same decoders, in every test run: each seed of
/// fuzz/corpus decodes or is refused with an error, and each input in fuzz/regressions (one crashed
/// a decoder once) is refused with an error, never a crash.
@Suite struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz")

    static func inputs(_ folder: String) -> [(harness: String, name: String, bytes: [UInt8])] {
        let directory = fuzz.appendingPathComponent(folder)
        let harnesses = ["coordinator-message", "worker-message", "segment-task", "encoded-segment"]
        let files = (try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? []
        return files.sorted().compactMap { path in
            let url = directory.appendingPathComponent(path)
            guard let data = FileManager.default.contents(atPath: url.path),
                  let harness = harnesses.first(where: { path.hasPrefix($0) }) else { return nil }
            return (harness, path, Array(data))
        }
    }

    /// A blob as given and, when its trailer does not match, with the trailer made right (as the fuzzers
    /// try it, to reach the header and the validation).
    static func variants(_ blob: [UInt8]) -> [[UInt8]] {
        guard blob.count >= 8 else { return [blob] }
        let checksum = PayloadChecksum.value(Array(blob.dropLast(8)))
        var repaired = blob
        repaired.withUnsafeMutableBytes { $0.storeBytes(of: checksum.littleEndian, toByteOffset: blob.count - 8, as: UInt64.self) }
        return repaired == blob ? [blob] : [blob, repaired]
    }

    /// What each harness decodes; true when everything it read was accepted.
    static func decode(_ harness: String, _ bytes: [UInt8]) -> Bool {
        func task(_ blob: [UInt8]) -> Bool { variants(blob).allSatisfy { (try? SegmentTask(serialized: $0)) != nil } }
        func result(_ blob: [UInt8]) -> Bool {
            variants(blob).allSatisfy { (try? EncodedSegment.checkedHeader($0)) != nil && (try? EncodedSegment(serialized: $0)) != nil }
        }
        switch harness {
        case "segment-task": return task(bytes)
        case "encoded-segment": return result(bytes)
        default:
            let frames = bytes.withUnsafeBytes { FuzzFrames.split($0) }
            guard let message = try? ClusterMessage(frames: frames) else { return false }
            switch message {
            case .task(_, let payload): return task(payload)
            case .result(_, let payload): return result(payload)
            default: return true
            }
        }
    }

    @Test func seedsDecode() {
        let seeds = Self.inputs("corpus").filter { $0.name.contains("seed-") }
        #expect(seeds.count >= 10)
        for seed in seeds { #expect(Self.decode(seed.harness, seed.bytes), "\(seed.name) is refused") }
    }

    @Test func regressionsAreRefusedNotCrashes() {
        let regressions = Self.inputs("regressions")
        #expect(!regressions.isEmpty)
        for input in regressions { #expect(!Self.decode(input.harness, input.bytes), "\(input.name) was accepted") }
        // The rest of the corpus: whatever each is, it must not crash.
        for input in Self.inputs("corpus") { _ = Self.decode(input.harness, input.bytes) }
    }
}
