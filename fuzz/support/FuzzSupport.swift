// Shared by every harness and by the seed generator; compiled into module TesseraCore with them
// (see fuzz/run), so it sees the module's internal API.

import Foundation

// FuzzFrames (how an input becomes a message's frames) is in Tests/TesseraCoreTests/FuzzFrames.swift, where
// the test suite replays the corpus and the regressions with it.

enum Fuzz {
    /// An invariant between decoders (or between a decoder and its encoder) that does not hold: a trap,
    /// which libFuzzer saves as a crash like any other.
    static func expect(_ condition: Bool, _ what: @autoclosure () -> String) {
        if !condition { fatalError("fuzz invariant failed: \(what())") }
    }

    /// Calls `body` with `bytes` in a heap block of exactly their size, so that AddressSanitizer reports a
    /// read one byte past the end (a Swift array's storage may have spare capacity after its elements).
    static func exactly<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { block.deallocate() }
        bytes.withUnsafeBytes { if $0.count > 0 { block.copyMemory(from: $0) } }
        return body(UnsafeRawBufferPointer(block))
    }

    /// Calls `body` with a blob as given and, when its XXH64 trailer does not match its bytes, once more
    /// with the trailer made right: a mutated blob otherwise almost never gets past the checksum to its
    /// JSON header and the payload's validation.
    static func blobVariants(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        body(bytes)
        guard bytes.count >= 8 else { return }
        let checksum = PayloadChecksum.value(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 8)]))
        guard Blob.storedChecksum(bytes) != checksum else { return }
        var repaired = Array(bytes)
        let at = repaired.count - 8
        repaired.withUnsafeMutableBytes { $0.storeBytes(of: checksum.littleEndian, toByteOffset: at, as: UInt64.self) }
        exactly(repaired, body)
    }

    /// The coordinator's checks of a result payload: `EncodedSegment.checkedHeader` (what it runs before
    /// spooling) and the full decode (what the stitcher runs later) must agree, and a decoded result must
    /// survive `serialized()` unchanged.
    static func result(_ bytes: UnsafeRawBufferPointer) {
        let checked = Result { () throws(PayloadError) in try EncodedSegment.checkedHeader(bytes) }
        let decoded = Result { () throws(PayloadError) in try EncodedSegment(serializedBytes: bytes) }
        switch (checked, decoded) {
        case (.success(let c), .success(let d)):
            expect(c.header == d.header, "checkedHeader and init(serializedBytes:) read different headers")
            expect(c.checksum == Blob.storedChecksum(bytes), "checkedHeader returned another checksum than the trailer's")
            let again = Result { () throws(PayloadError) in try EncodedSegment(serialized: d.serialized()) }
            expect(again == .success(d), "EncodedSegment does not survive serialized(): \(again)")
        case (.failure(let a), .failure(let b)):
            expect(a == b, "checkedHeader threw \(a), init(serializedBytes:) threw \(b)")
        case (.success, .failure(let b)):
            expect(false, "checkedHeader accepted a result init(serializedBytes:) refuses: \(b)")
        case (.failure(let a), .success):
            expect(false, "init(serializedBytes:) accepted a result checkedHeader refuses: \(a)")
        }
    }

    /// The worker's decode of a task payload; a decoded task must survive `serialized()` unchanged.
    static func task(_ bytes: UnsafeRawBufferPointer) {
        guard let task = try? SegmentTask(serializedBytes: bytes) else { return }
        let again = Result { () throws(PayloadError) in try SegmentTask(serialized: task.serialized()) }
        expect(again == .success(task), "SegmentTask does not survive serialized(): \(again)")
    }

    /// A decoded message must survive `frames()` unchanged.
    static func roundTrip(_ message: ClusterMessage) {
        let again = Result { () throws(WireError) in try ClusterMessage(frames: message.frames()) }
        expect(again == .success(message), "ClusterMessage does not survive frames(): \(again)")
    }
}

/// A structured mutation libFuzzer's byte mutators almost never make: one number of a JSON header (a
/// message's header frame, or a blob's header, whose length field and checksum are made right after)
/// replaced by a boundary value. A 19-digit Int.max in place of a one-digit index takes many lucky byte
/// mutations; here it is one step. Each harness calls `mutate` from its LLVMFuzzerCustomMutator and
/// leaves every other mutation to libFuzzer.
enum FuzzMutator {
    enum Format { case blob, frames }

    typealias LibFuzzerMutate = @convention(c) (UnsafeMutablePointer<UInt8>?, Int, Int) -> Int
    /// libFuzzer's own mutator, found at run time (fuzz/run exports it; the seed generator has none).
    static let libFuzzerMutate: LibFuzzerMutate? =
        dlsym(nil, "LLVMFuzzerMutate").map { unsafeBitCast($0, to: LibFuzzerMutate.self) }

    static let boundaries = [
        "0", "-1", "1", "-0", "0.5", "1e2", "127", "128", "255", "256", "65535", "65536",
        "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
        "4611686018427387904", "9223372036854775806", "9223372036854775807", "9223372036854775808",
        "-9223372036854775807", "-9223372036854775808", "18446744073709551615", "1e308", "-1e308", "1e309",
        "5e-324", "1.7976931348623157e308",
    ]

    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func mutate(_ format: Format, _ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int,
                       _ seed: UInt32) -> Int {
        var random = Random(state: UInt64(seed))
        if random.below(4) == 0 {
            let input = Array(UnsafeBufferPointer(start: data, count: size))
            let output: [UInt8]?
            switch format {
            case .blob: output = blob(input, &random)
            case .frames: output = frames(input, &random)
            }
            if let output, output.count <= maxSize {
                output.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: output.count) }
                return output.count
            }
        }
        guard let libFuzzerMutate else { fatalError("LLVMFuzzerMutate is not exported by this binary") }
        return libFuzzerMutate(data, size, maxSize)
    }

    static func frames(_ input: [UInt8], _ random: inout Random) -> [UInt8]? {
        var frames = input.withUnsafeBytes { FuzzFrames.split($0) }
        guard !frames.isEmpty else { return nil }
        let i = random.below(frames.count)
        let frame = frames[i]
        if frame.starts(with: ClusterMessage.magic), frame.count > 5 {
            guard let json = number(Array(frame[5...]), &random) else { return nil }
            frames[i] = Array(frame[0..<5]) + json
        } else {
            guard let mutated = blob(frame, &random) else { return nil }
            frames[i] = mutated
        }
        guard frames.dropLast().allSatisfy({ $0.count <= 0xFFFF }) else { return nil }
        return FuzzFrames.join(frames)
    }

    /// magic[4] version:u16 headerLength:u32 header ... checksum:u64 (see `Blob`).
    static func blob(_ input: [UInt8], _ random: inout Random) -> [UInt8]? {
        guard input.count >= 4 + 2 + 4 + 8 else { return nil }
        let length = Int(input[6]) | Int(input[7]) << 8 | Int(input[8]) << 16 | Int(input[9]) << 24
        guard length <= input.count - 18, let json = number(Array(input[10..<(10 + length)]), &random) else { return nil }
        let n = UInt32(json.count)
        var out = Array(input[0..<6]) + [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)]
        out += json + input[(10 + length)...]
        let checksum = out.withUnsafeBytes { PayloadChecksum.value(UnsafeRawBufferPointer(rebasing: $0[0..<(out.count - 8)])) }
        for k in 0..<8 { out[out.count - 8 + k] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt64(k))) }
        return out
    }

    /// `json` with one of its numbers (outside strings) replaced by a boundary value; nil when it has none.
    static func number(_ json: [UInt8], _ random: inout Random) -> [UInt8]? {
        var spans: [Range<Int>] = []
        var inString = false, escaped = false, start: Int?
        func isNumberByte(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
        }
        for (i, c) in json.enumerated() {
            if inString {
                if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if let s = start, !isNumberByte(c) { spans.append(s..<i); start = nil }
            if c == UInt8(ascii: "\"") { inString = true } else if start == nil, c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) { start = i }
        }
        if let s = start { spans.append(s..<json.count) }
        guard !spans.isEmpty else { return nil }
        let span = spans[random.below(spans.count)]
        let value = random.below(8) == 0 ? String(Int64(bitPattern: random.next()) >> random.below(64)) : boundaries[random.below(boundaries.count)]
        return Array(json[..<span.lowerBound]) + Array(value.utf8) + Array(json[span.upperBound...])
    }
}
