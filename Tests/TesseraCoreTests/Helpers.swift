import TesseraCore

/// A 32-bit big-endian length or size field.
func bigEndian32(_ value: Int) -> [UInt8] {
    let v = UInt32(value)
    return [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
}

extension [UInt8] {
    /// Appends a little-endian integer: for blobs written by hand.
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        var v = value.littleEndian
        Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
    }
}

extension Blob {
    /// As `encode(magic:header:packets:dataBytes:fillInPlace:)`, each record's bytes handed over to be
    /// copied into place.
    static func encode(magic: String, header: [UInt8], packets: Int, dataBytes: Int,
                       fill: ((_ pts: Int64?, _ dts: Int64?, _ duration: Int64, _ flags: UInt32, _ data: UnsafeRawBufferPointer) -> Void) -> Bool) -> [UInt8]? {
        encode(magic: magic, header: header, packets: packets, dataBytes: dataBytes) { (put: PutRecord) in
            withoutActuallyEscaping(put) { put in
                fill { pts, dts, duration, flags, data in
                    put(pts, dts, duration, flags, data.count) { $0.copyMemory(from: data); return true }
                }
            }
        }
    }
}
