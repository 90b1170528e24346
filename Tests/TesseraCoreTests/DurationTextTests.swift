import Testing
import TesseraCore

/// Durations as ffmpeg's options take them, for `coordinator --max-wait`.
struct DurationTextTests {
    @Test func readsSecondsUnitsAndClockTimes() {
        #expect(DurationText.seconds("600") == 600)
        #expect(DurationText.seconds("1.5") == 1.5)
        #expect(DurationText.seconds("500ms") == 0.5)
        #expect(DurationText.seconds("90s") == 90)
        #expect(DurationText.seconds("10m") == 600)
        #expect(DurationText.seconds("2H") == 7200)
        #expect(DurationText.seconds("10:00") == 600)
        #expect(DurationText.seconds("1:30:00.5") == 5400.5)
    }

    @Test func refusesWhatIsNotADuration() {
        for text in ["", "-5", "10x", "m", "1:60", "1:75:00", ":30", "1:2:3:4", "inf", "nan", "1e3", "5 m"] {
            #expect(DurationText.seconds(text) == nil, "\(text)")
        }
    }
}
