import Testing
import TesseraCore

/// The MPD of the hand-computed ladder, to the character, and its escaping.
@Suite struct DASHManifestTests {
    @Test func manifestHasExactTimelinesAndPerSegmentPeakBandwidths() throws {
        // bandwidth: the densest single segment, 500500 B × 8 / 2.5025 s = 1600000 (720p), 200200 B × 8 / 2.5025 s
        // = 640000 (360p), 41000 B × 8 / 2.538667 s = 129201.7 → 129202 (audio). minBufferTime: the longest
        // segment (audio's 6.016 s); the duration: the longest track (audio, 698368 / 48000 s).
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" mediaPresentationDuration="PT14.549333S" minBufferTime="PT6.016S">
              <Period id="0" start="PT0S">
                <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1" maxWidth="1280" maxHeight="720" maxFrameRate="30000/1001">
                  <Representation id="720p" bandwidth="1600000" width="1280" height="720" frameRate="30000/1001" sar="1:1" codecs="avc1.64001F">
                    <SegmentTemplate timescale="30000" initialization="720p/init.mp4" media="720p/segment_$Number%05d$.m4s" startNumber="1">
                      <SegmentTimeline>
                        <S t="0" d="180180" r="1"/>
                        <S d="75075"/>
                      </SegmentTimeline>
                    </SegmentTemplate>
                  </Representation>
                  <Representation id="360p" bandwidth="640000" width="640" height="360" frameRate="30000/1001" sar="1:1" codecs="avc1.4D401E">
                    <SegmentTemplate timescale="90000" initialization="360p/init.mp4" media="360p/segment_$Number%05d$.m4s" startNumber="1">
                      <SegmentTimeline>
                        <S t="0" d="540540" r="1"/>
                        <S d="225225"/>
                      </SegmentTimeline>
                    </SegmentTemplate>
                  </Representation>
                </AdaptationSet>
                <AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" lang="en" segmentAlignment="true" startWithSAP="1">
                  <Label>English</Label>
                  <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
                  <Representation id="audio" bandwidth="129202" codecs="mp4a.40.2" audioSamplingRate="48000">
                    <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>
                    <SegmentTemplate timescale="48000" initialization="audio/init.mp4" media="audio/segment_$Number%05d$.m4s" startNumber="1">
                      <SegmentTimeline>
                        <S t="0" d="288768"/>
                        <S d="287744"/>
                        <S d="121856"/>
                      </SegmentTimeline>
                    </SegmentTemplate>
                  </Representation>
                </AdaptationSet>
              </Period>
            </MPD>

            """
        #expect(try DASHManifest.render(SmallLadder.presentation) == expected)
    }

    @Test func namesAreEscapedForXMLAndDollarsForTemplates() throws {
        var rung = SmallLadder.high720
        rung.name = "hi&<q>"
        rung.directory = "Tom&Jerry's"
        rung.track.naming = SegmentNaming(prefix: "part$", digits: 0, suffix: ".m4s", firstNumber: 0)
        var audio = SmallLadder.english
        let mpd = try DASHManifest.render(PackagedPresentation(video: [rung], audio: nil))
        #expect(mpd.contains("<Representation id=\"hi&amp;&lt;q&gt;\""))
        #expect(mpd.contains("initialization=\"Tom&amp;Jerry&apos;s/init.mp4\" media=\"Tom&amp;Jerry&apos;s/part$$$Number$.m4s\" startNumber=\"0\""))
        audio.name = "Director's <commentary> & more"
        let withAudio = try DASHManifest.render(PackagedPresentation(video: [rung], audio: audio))
        #expect(withAudio.contains("<Label>Director&apos;s &lt;commentary&gt; &amp; more</Label>"))
        // HLS writes the same names as they are, inside quotes.
        let master = try HLSPlaylist.master(PackagedPresentation(video: [rung], audio: audio))
        #expect(master.contains("NAME=\"Director's <commentary> & more\""))
        #expect(master.contains("\nTom&Jerry's/index.m3u8\n"))
        #expect(HLSPlaylist.mediaPlaylist(rung.track).contains("\npart$0.m4s\n"))
    }

    @Test func noStartWithSAPWhenASegmentDoesNotOpenOnAnIDR() throws {
        var rung = SmallLadder.high720
        rung.track.segments[1].startsWithIDR = false
        let mpd = try DASHManifest.render(PackagedPresentation(video: [rung]))
        #expect(mpd.contains("segmentAlignment=\"true\" maxWidth"))
        #expect(!mpd.contains("startWithSAP"))
    }

    @Test func muxedAudioIsSignalledInTheVideoRepresentation() throws {
        var rung = SmallLadder.main360
        rung.muxedAudio = AudioFormat(objectType: 2, channels: 6, sampleRate: 44100)
        let mpd = try DASHManifest.render(PackagedPresentation(video: [rung]))
        #expect(mpd.contains("codecs=\"avc1.4D401E,mp4a.40.2\">\n"))
        #expect(mpd.contains("audio_channel_configuration:2011\" value=\"6\"/>"))
        #expect(!mpd.contains("contentType=\"audio\""))
    }

    @Test func timelineStartsAtTheTracksFirstPresentationTime() throws {
        var rung = SmallLadder.high720
        rung.track.startTicks = 2002
        rung.track.segments[1].duration = 180181
        let mpd = try DASHManifest.render(PackagedPresentation(video: [rung]))
        #expect(mpd.contains("<S t=\"2002\" d=\"180180\"/>\n") && mpd.contains("<S d=\"180181\"/>\n") && mpd.contains("<S d=\"75075\"/>\n"))
        // (2002 + 435436) / 30000 s.
        #expect(mpd.contains("mediaPresentationDuration=\"PT14.581267S\""))
    }
}
