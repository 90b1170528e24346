/// A value encoded by its own `Codable`, then `null` written for each of its stored optionals that is nil (which
/// synthesized encoding leaves out). Its properties must be named as its keys, as synthesized `CodingKeys` are.
public struct NullFilled<Value: Encodable>: Encodable {
    public let value: Value

    public init(_ value: Value) { self.value = value }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: Encoder) throws {
        try value.encode(to: encoder)
        // The same encoder hands back the object the value just wrote into.
        var c = encoder.container(keyedBy: Key.self)
        for child in Mirror(reflecting: value).children {
            let optional = Mirror(reflecting: child.value)
            guard let label = child.label, optional.displayStyle == .optional, optional.children.isEmpty else { continue }
            try c.encodeNil(forKey: Key(stringValue: label))
        }
    }
}
