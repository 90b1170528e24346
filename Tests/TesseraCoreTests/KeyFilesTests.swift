import Testing
@testable import TesseraCore

/// The key files of a secured cluster, read as `tessera keygen` writes them and as operators edit them.
@Suite struct KeyFilesTests {
    static let a = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
    static let b = "#jmDNA93Q-jBkXv0#z*h9Qk#B!9yDS6YOEvzh8T["

    @Test func aKeyPairFileRoundTrips() throws {
        let pair = KeyFiles.SecretKey(publicKey: Self.a, secretKey: Self.b)
        #expect(try KeyFiles.SecretKey(parsing: pair.text(name: "w1")) == pair)
        #expect(throws: KeyFiles.Failure(code: .missingSecretKey, line: nil)) { try KeyFiles.SecretKey(parsing: "public-key = \(Self.a)\n") }
        #expect(throws: KeyFiles.Failure(code: .notAKey, line: 2)) { try KeyFiles.SecretKey(parsing: "# x\nsecret-key = short\n") }
    }

    /// A Z85 key may itself start with `#`: a line that starts with a key is a key, not a comment.
    @Test func authorizedKeysTakeNamesCommentsAndKeysThatStartWithAHash() throws {
        let text = """
            # workers of rack 7
            \(Self.a)   encoder-1 (rack 7)

            \(Self.b)
              #  retired: \(Self.a)
            """
        let keys = try KeyFiles.authorizedKeys(parsing: text)
        #expect(keys == [.init(key: Self.a, name: "encoder-1 (rack 7)"), .init(key: Self.b, name: nil)])
        #expect(try KeyFiles.publicKey(parsing: "# coordinator\n\(Self.b)\n") == Self.b)
    }

    @Test func aLineThatIsNotAKeyIsNamedByNumber() {
        #expect(throws: KeyFiles.Failure(code: .notAKey, line: 3)) {
            try KeyFiles.authorizedKeys(parsing: "\(Self.a)\n\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5 someone\n")
        }
        #expect(KeyFiles.Failure(code: .notAKey, line: 3).description == "line 3: not a CURVE key (40 characters of Z85)")
    }
}
