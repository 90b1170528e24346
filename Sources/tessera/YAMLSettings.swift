import TesseraCore
import Yams

/// YAML settings files, read with Yams into the same request type as JSON.
enum YAMLSettings {
    static func decode(_ text: String) throws -> EncodingRequest {
        try YAMLDecoder().decode(EncodingRequest.self, from: text)
    }
}
