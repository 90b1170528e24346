import CCurl

/// A failed libcurl call: its CURLcode, libcurl's message, and what was being done. No URL, which may carry a
/// presigned signature.
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let operation: String

    init(_ code: CURLcode, operation: String) {
        self.code = Int32(bitPattern: code.rawValue)
        self.message = String(cString: curl_easy_strerror(code))
        self.operation = operation
    }

    /// Connection refused, reset or dropped, timed out: worth trying again.
    public var isTransient: Bool {
        let transient: [CURLcode] = [CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
                                     CURLE_PARTIAL_FILE, CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_RESOLVE_HOST]
        return transient.contains { Int32(bitPattern: $0.rawValue) == code }
    }

    public var description: String { "\(operation): \(message) (curl \(code))" }

    /// Every libcurl call goes through here: a non-zero code becomes an error.
    static func check(_ result: Int32, _ operation: String) throws(CurlError) {
        guard result != 0 else { return }
        throw CurlError(CURLcode(rawValue: UInt32(bitPattern: result)), operation: operation)
    }
}
