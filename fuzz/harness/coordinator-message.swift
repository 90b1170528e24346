// What a coordinator decodes from a worker: the message frames (ClusterMessage), and for a result its
// payload blob (EncodedSegment.checkedHeader, then the full decode the stitcher makes).
// Input: FuzzFrames (fuzz/support/FuzzSupport.swift).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let frames = FuzzFrames.split(UnsafeRawBufferPointer(start: data, count: size))
    let whole = Result { () throws(WireError) in try ClusterMessage(frames: frames) }
    if let head = frames.first {
        // The coordinator's own call: the header frame, the payload left where it was received.
        let inPlace = Result { () throws(WireError) in try ClusterMessage(head: head, payloadFrames: frames.count - 1) }
        switch (whole, inPlace) {
        case (.success(let a), .success(let b)):
            var stripped = a
            if case .result(let header, _) = a { stripped = .result(header, payload: []) }
            if case .task(let header, _) = a { stripped = .task(header, payload: []) }
            Fuzz.expect(stripped == b, "init(frames:) and init(head:payloadFrames:) read different messages")
        case (.failure(let a), .failure(let b)):
            Fuzz.expect(a == b, "init(frames:) threw \(a), init(head:payloadFrames:) threw \(b)")
        default:
            Fuzz.expect(false, "init(frames:) and init(head:payloadFrames:) disagree: \(whole) / \(inPlace)")
        }
    }
    guard case .success(let message) = whole else { return 0 }
    Fuzz.roundTrip(message)
    if case .result = message {
        Fuzz.exactly(frames[1]) { payload in Fuzz.blobVariants(payload, Fuzz.result) }
    }
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func mutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    FuzzMutator.mutate(.frames, data, size, maxSize, seed)
}
