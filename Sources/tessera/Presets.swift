import ArgumentParser
import Foundation
import TesseraCore

/// `tessera presets`: the named recipes and the x264 speed presets.
struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List the named recipes (--recipe) and the x264 speed presets (--preset).",
        discussion: "Options given on the command line or in a --settings file override a recipe's values one by one.")

    @Flag(help: "Print the recipes as JSON (their options, keyed as in a --settings file).") var json = false

    func run() throws {
        if json {
            let recipes = Dictionary(uniqueKeysWithValues: Recipe.all.map { ($0.name, $0.request) })
            print(CanonicalJSON.encode(recipes, pretty: true))
            return
        }
        print("Recipes (--recipe NAME):")
        for recipe in Recipe.all {
            print("  \(recipe.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(recipe.summary)")
            print("  \(String(repeating: " ", count: 10)) \(Self.options(recipe.request))")
        }
        print("")
        print("x264 speed presets (--preset NAME, default medium): \(EncoderSettings.presets.joined(separator: ", "))")
    }

    /// A recipe's values as the options that would set them.
    static func options(_ request: EncodingRequest) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(CanonicalJSON.encode(request).utf8)) as? [String: Any] else { return "" }
        return object.keys.sorted().compactMap { key in
            guard let value = object[key] else { return nil }
            let text = (value as? [Any]).map { $0.map { "\($0)" }.joined(separator: ",") } ?? "\(value)"
            return "--\(key) \(text)"
        }.joined(separator: " ")
    }
}
