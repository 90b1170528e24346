import Foundation
import TesseraCore

/// Makes a ladder job's finished segments into its outputs at their temporary paths: CMAF renditions with HLS
/// playlists and/or a DASH manifest in one folder, or one faststart MP4 per rung. Segments are loaded as they are
/// written, once per rung, so a long job never holds every result in memory.
public enum LadderPackager {
    /// The folder of the audio rendition, beside the rungs' folders.
    public static let audioFolder = "audio"

    /// What was written: the streaming presentation (nil for files) and the manifests, each as a path.
    public struct Report: Sendable {
        public var presentation: PackagedPresentation?
        public var manifests: [String]
    }

    /// Writes `plan`'s ladder into `destination.temporaries`. A segment that cannot be used (missing, damaged, another
    /// frame count or other headers) fails as `.stitch` naming it, so it can be encoded again.
    public static func package(plan: JobPlan, loadSegment: (Int) throws(TesseraError) -> EncodedSegment, audio: AudioTrack?,
                               into destination: LadderOutput) throws(TesseraError) -> Report {
        guard let ladder = plan.ladder else { throw TesseraError(.stitch, destination.output, "the job has no ladder") }
        guard destination.packaging.isStreaming else {
            for r in ladder.rungs.indices {
                _ = try Stitcher.stitch(plan: plan.forRung(r), loadSegment: { k throws(TesseraError) in try loadSegment(k).rung(r) },
                                        audio: audio, to: destination.temporaries[r])
            }
            return Report(presentation: nil, manifests: [])
        }
        let folder = destination.temporaryFolder
        let first = try loadSegment(0).checked(0, plan: plan, reference: nil)
        let headers = (0..<ladder.rungs.count).map { first.rung($0).header.extradata }
        let timeBase = plan.output.timeBase
        guard ladder.rungs.allSatisfy({ $0.output.timeBase == timeBase }) else {
            throw TesseraError(.stitch, destination.output, "the rungs' time bases differ; their segments cannot share a timeline")
        }
        // One timeline for every rendition: the earliest decode time of any rung, or the audio's when it is earlier.
        let firstDTS = (0..<ladder.rungs.count).compactMap { r in first.rung(r).packets.first.map { $0.dts ?? $0.pts ?? 0 } }.min() ?? 0
        let timeline = CMAFTimeline.common(videoFirstDTS: firstDTS, videoTimeBase: timeBase, audio: audio)
        let cuts = plan.packagingCutTicks
        let muxAudio = ladder.spec.audioPerRung ? audio : nil

        var rungs: [CMAFRung] = []
        var audioRendition: CMAFRendition?
        var refused: TesseraError?  // a segment's own failure, kept whole (with its index) through the writer's error
        do throws(CMAFError) {
            try makeFolder(folder)
            for (r, name) in ladder.names.enumerated() {
                let video = CMAFWriter.Video(plan: plan.forRung(r), extradata: headers[r])
                let directory = folder + "/" + name
                try makeFolder(directory)
                let rendition = try CMAFWriter.writeVideo(video, segmentCount: plan.cuts.segments.count, loadSegment: { k throws(TesseraError) in
                    do throws(TesseraError) {
                        return try (k == 0 ? first : loadSegment(k).checked(k, plan: plan, reference: first.header.extradata)).rung(r)
                    } catch {
                        refused = error
                        throw error
                    }
                }, cuts: cuts, timeline: timeline, muxedAudio: muxAudio, to: directory)
                rungs.append(CMAFRung(name: name, rendition: rendition, video: video, muxedAudio: muxAudio?.parameters))
            }
            if let audio, muxAudio == nil {
                let directory = folder + "/" + audioFolder
                try makeFolder(directory)
                audioRendition = try CMAFWriter.writeAudio(audio, cuts: cuts, timeline: timeline, to: directory)
            }
        } catch {
            if let refused { throw refused }
            throw TesseraError(.stitch, error.subject, error.problem)
        }
        do throws(StreamingPackageError) {
            let presentation = try PackagedPresentation(cmafRungs: rungs, audio: audioRendition, audioParameters: audioRendition == nil ? nil : audio?.parameters,
                                                        root: folder)
            let manifests = try StreamingPackage.write(presentation, to: folder, master: destination.masterName, manifest: destination.manifestName)
            return Report(presentation: presentation, manifests: manifests)
        } catch {
            throw TesseraError(.stitch, destination.output, error.description)
        }
    }

    static func makeFolder(_ path: String) throws(CMAFError) {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) } catch {
            throw CMAFError(.writing, path, "cannot create the folder (\(error.localizedDescription))")
        }
    }
}
