extension EncodingRequest {
    /// The request's ladder, checked; nil when none is asked for.
    public func resolvedLadder() throws(SettingsError) -> Ladder? {
        guard let ladder else { return nil }
        do {
            return try Ladder(items: ladder)
        } catch {
            throw SettingsError(error.description)
        }
    }

    /// Refuses a bad ladder, or one beside the options it replaces, before any work starts.
    func checkLadder(settings: EncoderSettings, picture: PictureSettings) throws(SettingsError) {
        guard try resolvedLadder() != nil else { return }
        do {
            try Ladder.checkCompatible(settings: settings, picture: picture)
        } catch {
            throw SettingsError(error.description)
        }
    }

    /// A ladder given in a layer replaces the sizing and the rate control of the layers below it.
    mutating func dropOptionsALadderReplaces() {
        size = nil
        maxSize = nil
        bitrate = nil
        passes = nil
        maxrate = nil
        bufsize = nil
    }

    /// `ladder` in a settings file: a string (`"1080,720:3M"`), one number, or a list of heights and
    /// `HEIGHT:RATE` strings.
    static func ladderItems(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> [String]? {
        guard c.contains(key) else { return nil }
        if let text = try? c.decode(String.self, forKey: key) { return [text] }
        if let number = try? c.decode(Int.self, forKey: key) { return [String(number)] }
        var list = try c.nestedUnkeyedContainer(forKey: key)
        var items: [String] = []
        while !list.isAtEnd {
            if let text = try? list.decode(String.self) { items.append(text) } else { items.append(String(try list.decode(Int.self))) }
        }
        return items
    }
}
