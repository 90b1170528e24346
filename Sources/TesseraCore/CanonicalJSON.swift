import Foundation

/// JSON with sorted keys: the same value always gives the same bytes.
public enum CanonicalJSON {
    public static func encode<T: Encodable>(_ value: T, pretty: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain Codable structs of numbers and strings cannot fail.
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    public static func data<T: Encodable>(_ value: T) -> [UInt8] { Array(encode(value).utf8) }

    /// A stable digest of a value: FNV-1a over its canonical JSON.
    public static func digest<T: Encodable>(_ value: T) -> String { FNV1a64.hex(data(value)) }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
