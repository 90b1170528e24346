/// Permission bits for a job's outputs (`--output-mode 0644`), written in octal as `chmod` takes them.
public enum OutputMode {
    /// The bits of an octal text such as `0644` or `640`; nil for anything else or for bits beyond 0777.
    public static func parse(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 4, let bits = Int(text, radix: 8), (0...0o777).contains(bits) else { return nil }
        return bits
    }

    /// `0644` for 0o644.
    public static func text(_ bits: Int) -> String {
        let digits = String(bits, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The mode of a folder holding files of mode `bits`: whoever may read the files may also enter the folder
    /// (0644 gives 0755, 0640 gives 0750).
    public static func directory(for bits: Int) -> Int {
        let readable = bits & 0o444
        return bits | (readable >> 2)
    }
}
