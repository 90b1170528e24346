/// How often and how patiently a failed request is tried again: exponential back-off with full jitter (a random
/// wait up to base·2ⁿ, capped), a bounded number of tries.
public struct S3RetryPolicy: Sendable {
    public var attempts: Int
    public var baseDelay: Double
    public var maxDelay: Double

    public init(attempts: Int, baseDelay: Double, maxDelay: Double) {
        self.attempts = max(1, attempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    public static let standard = S3RetryPolicy(attempts: 6, baseDelay: 0.2, maxDelay: 10)

    /// The wait before try `attempt + 1` (attempt counts from 1), in seconds.
    public func delay(after attempt: Int, random: Double = Double.random(in: 0...1)) -> Double {
        random * min(maxDelay, baseDelay * Double(1 << min(attempt - 1, 30)))
    }
}

extension S3RetryPolicy {
    /// Sends the request `make` builds (afresh each try, so a signature carries the current time) until it
    /// succeeds, fails for good, or the tries run out; then one error naming `object`.
    /// `tries`: how many were made (more than one: an earlier try may have done its work unseen, its answer lost).
    func run(object: String, region: String, sleep: (Double) -> Void, curl: CurlEasy, tries attempt: inout Int,
             _ make: () -> HTTPRequest) throws(S3Error) -> HTTPResponse {
        attempt = 0
        while true {
            attempt += 1
            let failure: S3Error
            do {
                let response = try curl.perform(make())
                if (200..<300).contains(response.status) { return response }
                failure = S3Error.classify(response, object: object, region: region)
            } catch {
                failure = S3Error(error.isTransient ? .transport : .invalidResponse, object: object, detail: error.description)
            }
            guard failure.isRetryable, attempt < attempts else {
                guard failure.isRetryable else { throw failure }
                throw S3Error(failure.code, object: object, detail: failure.detail + " after \(attempt) tries", status: failure.status)
            }
            sleep(delay(after: attempt))
        }
    }
}
