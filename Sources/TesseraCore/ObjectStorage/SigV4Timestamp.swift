/// The two forms of a SigV4 time: `20130524T000000Z` (x-amz-date) and `20130524` (the credential scope),
/// computed from Unix seconds in UTC without a locale-dependent formatter.
public struct SigV4Timestamp: Sendable, Equatable {
    public let amzDate: String
    public var day: String { String(amzDate.prefix(8)) }

    public init(unixSeconds: Int64) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let seconds = unixSeconds - days * 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        amzDate = pad(year, 4) + pad(month, 2) + pad(day, 2) + "T" + pad(seconds / 3600, 2) + pad(seconds % 3600 / 60, 2)
            + pad(seconds % 60, 2) + "Z"
    }
}
