// A task payload (TSEG blob) straight into SegmentTask(serializedBytes:), the worker's decode: framing,
// checksum, JSON header, validation. The input is the blob.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    Fuzz.blobVariants(UnsafeRawBufferPointer(start: data, count: size), Fuzz.task)
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func mutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    FuzzMutator.mutate(.blob, data, size, maxSize, seed)
}
