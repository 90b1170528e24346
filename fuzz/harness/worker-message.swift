// What a worker decodes from the coordinator: the header frame (ClusterMessage(head:payloadFrames:),
// as WorkerSession calls it) and, for a task, its payload blob (SegmentTask(serializedBytes:)).
// Input: FuzzFrames (fuzz/support/FuzzSupport.swift).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let frames = FuzzFrames.split(UnsafeRawBufferPointer(start: data, count: size))
    guard let head = frames.first else { return 0 }
    guard let message = try? ClusterMessage(head: head, payloadFrames: frames.count - 1) else { return 0 }
    if case .task = message {
        Fuzz.exactly(frames[1]) { payload in Fuzz.blobVariants(payload, Fuzz.task) }
    }
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func mutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    FuzzMutator.mutate(.frames, data, size, maxSize, seed)
}
