/// A 32-bit big-endian length or size field.
func bigEndian32(_ value: Int) -> [UInt8] {
    let v = UInt32(value)
    return [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
}
