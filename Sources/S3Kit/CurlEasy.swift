import Foundation
import CCurl
import CTesseraShim

/// One libcurl easy handle: performs requests one at a time, blocking, on the calling thread (callers run it on
/// their own dedicated thread, never the cooperative pool). Reused between requests so connections are kept.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    /// curl_global_init is not thread-safe; a static let runs it once, under Swift's lazy-initialisation lock.
    private static let globalInit: Int32 = Int32(bitPattern: curl_global_init(Int(CURL_GLOBAL_DEFAULT)).rawValue)

    init() throws(CurlError) {
        try CurlError.check(Self.globalInit, "curl_global_init")
        guard let handle = curl_easy_init() else { throw CurlError(CURLE_FAILED_INIT, operation: "curl_easy_init") }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// What the callbacks fill and drain during one request.
    private final class Exchange {
        var upload: [UInt8]
        var uploaded = 0
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        init(upload: [UInt8]) { self.upload = upload }
    }

    func perform(_ request: HTTPRequest, timeoutSeconds: Int = 300) throws(CurlError) -> HTTPResponse {
        curl_easy_reset(handle)
        let exchange = Exchange(upload: request.body)
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        // No `Expect: 100-continue` round trip before each part.
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:"] { list = curl_slist_append(list, line) }

        func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
            try CurlError.check(tessera_curl_setopt_long(handle, Int32(option.rawValue), value), "curl_easy_setopt")
        }
        try CurlError.check(tessera_curl_setopt_string(handle, Int32(CURLOPT_URL.rawValue), request.url), "curl_easy_setopt(URL)")
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_CONNECTTIMEOUT, 10)
        // A transfer that moves under 1 KiB/s for 30 s has stalled.
        try set(CURLOPT_LOW_SPEED_LIMIT, 1024)
        try set(CURLOPT_LOW_SPEED_TIME, 30)
        try set(CURLOPT_TIMEOUT, timeoutSeconds)
        // curl resends a request silently when a kept connection turns out closed; a POST (create, complete) that
        // the store did carry out would then be done twice unseen. On a fresh connection a lost answer is an error
        // the caller sees, and counts as a try.
        if request.method == "POST" { try set(CURLOPT_FRESH_CONNECT, 1) }
        switch request.method {
        case "GET": break
        case "HEAD": try set(CURLOPT_NOBODY, 1)
        default:
            try CurlError.check(tessera_curl_setopt_string(handle, Int32(CURLOPT_CUSTOMREQUEST.rawValue), request.method), "curl_easy_setopt")
            try set(CURLOPT_UPLOAD, 1)
            try CurlError.check(tessera_curl_setopt_offset(handle, Int32(CURLOPT_INFILESIZE_LARGE.rawValue), Int64(request.body.count)),
                                "curl_easy_setopt")
            try CurlError.check(tessera_curl_setopt_callback(handle, Int32(CURLOPT_READFUNCTION.rawValue), Self.read), "curl_easy_setopt")
            try CurlError.check(tessera_curl_setopt_seek(handle, Self.seek), "curl_easy_setopt(SEEKFUNCTION)")
        }
        try CurlError.check(tessera_curl_setopt_pointer(handle, Int32(CURLOPT_HTTPHEADER.rawValue), UnsafeMutableRawPointer(list)),
                            "curl_easy_setopt")
        try CurlError.check(tessera_curl_setopt_callback(handle, Int32(CURLOPT_WRITEFUNCTION.rawValue), Self.write), "curl_easy_setopt")
        try CurlError.check(tessera_curl_setopt_callback(handle, Int32(CURLOPT_HEADERFUNCTION.rawValue), Self.header), "curl_easy_setopt")
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        for option in [CURLOPT_READDATA, CURLOPT_SEEKDATA, CURLOPT_WRITEDATA, CURLOPT_HEADERDATA] {
            try CurlError.check(tessera_curl_setopt_pointer(handle, Int32(option.rawValue), context), "curl_easy_setopt")
        }
        let result = withExtendedLifetime(exchange) { curl_easy_perform(handle) }
        try CurlError.check(Int32(bitPattern: result.rawValue), "\(request.method) request")
        var status = 0
        try CurlError.check(tessera_curl_getinfo_long(handle, Int32(bitPattern: CURLINFO_RESPONSE_CODE.rawValue), &status), "curl_easy_getinfo")
        return HTTPResponse(status: status, headers: exchange.headers, body: exchange.body)
    }

    private static let write: tessera_curl_data_callback = { data, size, count, context in
        let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
        // The whole body at once when its length is known: growing by doubling would hold up to three times a range.
        if exchange.body.isEmpty, let length = exchange.headers["content-length"].flatMap(Int.init), length > 0, length <= 1 << 31 {
            exchange.body.reserveCapacity(length)
        }
        exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }

    private static let read: tessera_curl_data_callback = { buffer, size, count, context in
        let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
        let n = min(size * count, exchange.upload.count - exchange.uploaded)
        guard n > 0 else { return 0 }
        exchange.upload.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer!).copyMemory(from: source.baseAddress! + exchange.uploaded, byteCount: n)
        }
        exchange.uploaded += n
        return n
    }

    /// The body from `offset` again (curl resends it on a fresh connection when a kept one was found closed).
    private static let seek: tessera_curl_seek_callback = { context, offset, origin in
        let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
        guard origin == SEEK_SET, offset >= 0, offset <= exchange.upload.count else { return 1 }
        exchange.uploaded = Int(offset)
        return 0
    }

    /// Header lines, one per call; a new status line (after a 100 or a redirect) starts the set afresh.
    private static let header: tessera_curl_data_callback = { data, size, count, context in
        let exchange = Unmanaged<Exchange>.fromOpaque(context!).takeUnretainedValue()
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            exchange.headers = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            exchange.headers[name] = value
        }
        return size * count
    }
}
