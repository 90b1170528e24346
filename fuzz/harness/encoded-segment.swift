// A result payload (TRES blob) straight into EncodedSegment.checkedHeader (the coordinator's check) and
// EncodedSegment(serializedBytes:) (the stitcher's decode), which must agree. The input is the blob.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    Fuzz.blobVariants(UnsafeRawBufferPointer(start: data, count: size), Fuzz.result)
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func mutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    FuzzMutator.mutate(.blob, data, size, maxSize, seed)
}
