import Testing
import TesseraCore

/// The HLS playlists of a hand-computed ladder, to the character.
@Suite struct HLSPlaylistTests {
    @Test func masterPlaylistDeclaresMeasuredRatesCodecsAndGroups() throws {
        // 720p BANDWIDTH: the densest run lasting 3-9.5 s (target 6) is segments 2+3, (900900+500500) B × 8 / 8.5085 s
        // = 1317647.06 → 1317648; audio's is its segments 2+3, 137000 B × 8 / 8.533333 s = 128437.5 → 128438.
        // AVERAGE: 2152150 B × 8 / 14.5145 s = 1186206.9 → 1186207; audio 233256 B × 8 / 14.549333 s → 128257.
        // 360p: 575575 B × 8 / 8.5085 s → 541177 (+128438); 875875 B × 8 / 14.5145 s → 482759 (+128257).
        // I-frames: (75075+50050) B × 8 / 8.5085 s → 117648; (37537+20020) B × 8 / 8.5085 s → 54118.
        let expected = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio/index.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1446086,AVERAGE-BANDWIDTH=1314464,CODECS="avc1.64001F,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970,AUDIO="audio"
            720p/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=669615,AVERAGE-BANDWIDTH=611016,CODECS="avc1.4D401E,mp4a.40.2",RESOLUTION=640x360,FRAME-RATE=29.970,AUDIO="audio"
            360p/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=117648,CODECS="avc1.64001F",RESOLUTION=1280x720,URI="720p/iframes.m3u8"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=54118,CODECS="avc1.4D401E",RESOLUTION=640x360,URI="360p/iframes.m3u8"

            """
        #expect(try HLSPlaylist.master(SmallLadder.presentation) == expected)
    }

    @Test func mediaPlaylistsAreVODWithTheInitSegmentAndExactDurations() {
        #expect(HLSPlaylist.mediaPlaylist(SmallLadder.high720.track) == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:6
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:6.006,
            segment_00001.m4s
            #EXTINF:6.006,
            segment_00002.m4s
            #EXTINF:2.5025,
            segment_00003.m4s
            #EXT-X-ENDLIST

            """)
        // 287744 / 48000 = 5.99466666… s: six decimals, rounded.
        #expect(HLSPlaylist.mediaPlaylist(SmallLadder.english.track) == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:6
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:6.016,
            segment_00001.m4s
            #EXTINF:5.994667,
            segment_00002.m4s
            #EXTINF:2.538667,
            segment_00003.m4s
            #EXT-X-ENDLIST

            """)
    }

    @Test func iFramePlaylistListsEachSegmentsIDRAsAByteRange() {
        #expect(HLSPlaylist.iFramePlaylist(SmallLadder.main360.track) == """
            #EXTM3U
            #EXT-X-VERSION:5
            #EXT-X-TARGETDURATION:6
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-I-FRAMES-ONLY
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:6.006,
            #EXT-X-BYTERANGE:30030@0
            segment_00001.m4s
            #EXTINF:6.006,
            #EXT-X-BYTERANGE:37537@0
            segment_00002.m4s
            #EXTINF:2.5025,
            #EXT-X-BYTERANGE:20020@0
            segment_00003.m4s
            #EXT-X-ENDLIST

            """)
    }

    @Test func filesPutEachPlaylistInItsRenditionsFolder() throws {
        let files = try HLSPlaylist.files(SmallLadder.presentation, masterPath: "master.m3u8")
        #expect(files.map(\.path) == ["master.m3u8", "720p/index.m3u8", "720p/iframes.m3u8", "360p/index.m3u8", "360p/iframes.m3u8", "audio/index.m3u8"])
    }

    @Test func aRungWithoutIFrameRangesGetsNoIFramePlaylist() throws {
        var rung = SmallLadder.main360
        rung.track.segments[1].iFrame = nil
        let presentation = PackagedPresentation(video: [SmallLadder.high720, rung])
        let master = try HLSPlaylist.master(presentation)
        #expect(master.contains("URI=\"720p/iframes.m3u8\""))
        #expect(!master.contains("360p/iframes.m3u8"))
        #expect(HLSPlaylist.iFramePlaylist(rung.track) == nil)
        #expect(try !HLSPlaylist.files(presentation).map(\.path).contains("360p/iframes.m3u8"))
    }

    @Test func independentSegmentsOnlyWhenEverySegmentOfEveryRungStartsWithAnIDR() throws {
        var rung = SmallLadder.main360
        rung.track.segments[2].startsWithIDR = false
        let master = try HLSPlaylist.master(PackagedPresentation(video: [SmallLadder.high720, rung], audio: SmallLadder.english))
        #expect(!master.contains("#EXT-X-INDEPENDENT-SEGMENTS"))
        #expect(try HLSPlaylist.master(SmallLadder.presentation).contains("#EXT-X-INDEPENDENT-SEGMENTS\n"))
    }

    @Test func muxedAudioJoinsTheRungsCodecsWithoutAGroup() throws {
        var rung = SmallLadder.high720
        rung.muxedAudio = AudioFormat(objectType: 5, channels: 2, sampleRate: 48000)
        let master = try HLSPlaylist.master(PackagedPresentation(video: [rung]))
        #expect(master == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-STREAM-INF:BANDWIDTH=1317648,AVERAGE-BANDWIDTH=1186207,CODECS="avc1.64001F,mp4a.40.5",RESOLUTION=1280x720,FRAME-RATE=29.970
            720p/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=117648,CODECS="avc1.64001F",RESOLUTION=1280x720,URI="720p/iframes.m3u8"

            """)
    }

    @Test func targetDurationRoundsTheLongestPrintedDurationToTheNearestSecond() {
        // 6.5 s rounds up; 5.49 s down; 5.4999996 s prints as 5.5 and so needs 6, though it is below 5.5.
        #expect(HLSPlaylist.targetDuration([6_500, 6_000], 1000) == 7)
        #expect(HLSPlaylist.targetDuration([5_490, 2_000], 1000) == 5)
        #expect(HLSPlaylist.targetDuration([54_999_996, 10_000_000], 10_000_000) == 6)
        #expect(HLSPlaylist.targetDuration([54_999_994, 10_000_000], 10_000_000) == 5)
        // Never below an EXTINF rounded: the longest segment decides, wherever it is.
        #expect(HLSPlaylist.targetDuration([4_000, 6_600, 3_000], 1000) == 7)
        // A sub-second clip still has a target of 1 s.
        #expect(HLSPlaylist.targetDuration([400], 1000) == 1)
        let track = MediaTrack(timescale: 1000, segments: SmallLadder.segments([5_490, 6_500, 1_000], [10, 10, 10]))
        let playlist = HLSPlaylist.mediaPlaylist(track)
        #expect(playlist.contains("#EXT-X-TARGETDURATION:7\n"))
        #expect(playlist.contains("#EXTINF:5.490,\n") && playlist.contains("#EXTINF:6.500,\n") && playlist.contains("#EXTINF:1.000,\n"))
    }

    @Test func frameRateHasThreeDecimals() throws {
        for (rate, text) in [(Rational(25, 1), "25.000"), (Rational(24000, 1001), "23.976"), (Rational(60000, 1001), "59.940"), (Rational(50, 1), "50.000")] {
            var rung = SmallLadder.high720
            rung.frameRate = rate
            #expect(try HLSPlaylist.master(PackagedPresentation(video: [rung])).contains("FRAME-RATE=\(text)\n"))
        }
    }
}
