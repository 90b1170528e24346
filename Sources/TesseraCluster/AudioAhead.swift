import Dispatch
import TesseraCore
import TesseraEngine

/// Each job's audio, made while its video encodes: the coordinator's threads have nothing else to do
/// then, and the stitch only muxes what is ready instead of reading (or encoding) the whole track first.
/// An audio made ahead that failed is made again by the stitch, which reports its own error.
final class AudioAhead: Sendable {
    final class Track: Sendable {
        let done = DispatchGroup()
        let result = Locked<AudioTrack??>(nil)
        let halted = CancellationFlag()
    }

    private let tracks = Locked<[String: Track]>([:])

    /// Starts making `plan`'s audio for `job` on a thread of `group`, in place of any made before.
    func start(_ job: String, _ plan: JobPlan, group: DispatchGroup, stopping: CancellationFlag?) {
        let track = Track()
        tracks.withValue { $0[job]?.halted.cancel(); $0[job] = track }
        track.done.enter()
        _ = startThread(name: "tessera-audio-\(job.prefix(8))", group: group) {
            defer { track.done.leave() }
            let made = Result { () throws(TesseraError) in
                try AudioTranscoder.run(plan) { track.halted.isCancelled || stopping?.isCancelled == true }
            }
            if case .success(let audio) = made { track.result.withValue { $0 = .some(audio) } }
        }
    }

    /// The audio made ahead for `job`, once it is ready; nil when none was started or it failed.
    func take(_ job: String) -> AudioTrack?? {
        guard let track = tracks.withValue({ $0[job] }) else { return nil }
        track.done.wait()
        return track.result.current
    }

    /// Forgets `job`'s audio, stopping it if still being made.
    func drop(_ job: String) {
        tracks.withValue { $0.removeValue(forKey: job) }?.halted.cancel()
    }
}
