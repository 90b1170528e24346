import Foundation
import Testing
import TesseraCore
import TesseraTestSupport

/// The README's table of default peak rates is what a 16:9 1080p source's rungs get.
@Suite struct LadderDocsTests {
    @Test func readmeRatesMatchTheCode() throws {
        let readme = try String(contentsOf: Fixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Rendition ladders (HLS/DASH)").dropFirst().first)
        let rows = section.components(separatedBy: "\n## ")[0].split(separator: "\n")
            .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { $0.count == 3 && Int($0[0]) != nil }
        #expect(rows.count >= 4, "the table has the usual rungs")
        let source = LadderSource(width: 3840, height: 2160, fps: 30)
        for row in rows {
            let rung = try #require(try Ladder(parsing: row[0]).resolve(for: source, settings: EncoderSettings(), picture: PictureSettings()).rungs.first)
            #expect("\(rung.width)x\(rung.height)" == row[1], "\(row)")
            #expect(rung.rateIsDefault && "\(rung.maxrate / 1000)k" == row[2], "\(row): the code gives \(rung.maxrate / 1000)k")
        }
    }
}
