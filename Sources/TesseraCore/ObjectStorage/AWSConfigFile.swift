/// The INI files of AWS's tools, `~/.aws/credentials` (sections named for the profile) and `~/.aws/config`
/// (sections `[profile NAME]`, except `[default]`).
public struct AWSConfigFile: Sendable, Equatable {
    public private(set) var sections: [String: [String: String]] = [:]

    public init(parsing text: String) {
        var current: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmedBlanks()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = String(line.dropFirst().dropLast()).trimmedBlanks()
                current = name
                sections[name, default: [:]] = sections[name] ?? [:]
                continue
            }
            // Nested sub-settings (`s3 =` followed by indented lines) start with whitespace; keep top-level ones.
            guard let section = current, raw.first != " ", raw.first != "\t", let eq = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<eq]).trimmedBlanks().lowercased()
            let value = String(line[line.index(after: eq)...]).trimmedBlanks()
            sections[section, default: [:]][key] = value
        }
    }

    /// The credentials file's section for a profile.
    public func credentialsProfile(_ name: String) -> [String: String]? { sections[name] }

    /// The config file's section for a profile: `[default]` or `[profile NAME]`.
    public func configProfile(_ name: String) -> [String: String]? {
        name == "default" ? (sections["default"] ?? sections["profile default"]) : sections["profile \(name)"]
    }
}

extension StringProtocol {
    fileprivate func trimmedBlanks() -> String {
        let drop: Set<Character> = [" ", "\t"]
        return String(self.drop(while: { drop.contains($0) }).reversed().drop(while: { drop.contains($0) }).reversed())
    }
}
