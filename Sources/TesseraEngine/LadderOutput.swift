import Foundation
import TesseraCore

/// Where a ladder job's outputs go, and how they get there whole: HLS/DASH is one folder (the output path's
/// parent, `DIR/master.m3u8`), written as a hidden sibling and renamed into place after verification; `.files`
/// is one MP4 per rung beside the output path (`out_720p.mp4`), each written to a hidden temporary first.
public struct LadderOutput: Sendable {
    public let output: String
    public let packaging: LadderSpec.Packaging
    /// The rungs kept, in the ladder's order.
    public let rungs: [Ladder.Rung]
    /// What the job leaves: the folder, or each rung's file in rung order.
    public let places: [String]
    /// Where each of `places` is written before it is verified (same directory, so a rename moves it).
    public let temporaries: [String]

    /// The objects put so far, for an `s3://` output (what `removePlaced` deletes); nil for local files.
    let uploaded: Locked<[S3Location]>?

    public init(output: String, spec: LadderSpec, rungs: [Ladder.Rung]) {
        self.output = output
        packaging = spec.packaging
        self.rungs = rungs
        let isObject = S3Location.isS3(output)
        uploaded = isObject ? Locked([]) : nil
        if spec.packaging.isStreaming {
            let folder = OutputPath.streamingFolder(of: output)
            places = [folder]
            temporaries = [isObject ? OutputPath.uploadStaging(pathExtension: nil) : OutputPath.hiddenSibling(of: folder, tag: "tmp")]
        } else {
            places = rungs.map { $0.outputPath(for: output) }
            temporaries = places.map {
                let ext = URL(fileURLWithPath: $0).pathExtension
                return isObject ? OutputPath.uploadStaging(pathExtension: ext) : OutputPath.temporary(for: $0, pathExtension: ext)
            }
        }
    }

    /// The job's ladder outputs for `plan`, or nil for a single-output job.
    public init?(plan: JobPlan, output: String) {
        guard let ladder = plan.ladder else { return nil }
        self.init(output: output, spec: ladder.spec, rungs: ladder.resolved.rungs.map(\.rung))
    }

    /// The streaming folder's temporary (valid for HLS/DASH only).
    public var temporaryFolder: String { temporaries[0] }

    /// The master playlist's name in the folder: the output's own name when it is a playlist, else the default.
    public var masterName: String? {
        guard packaging.writesHLS else { return nil }
        let name = URL(fileURLWithPath: output).lastPathComponent
        return name.lowercased().hasSuffix(".m3u8") ? name : StreamingPackage.masterName
    }

    /// The MPD's name in the folder: the output's own name when it is an MPD, else the default.
    public var manifestName: String? {
        guard packaging.writesDASH else { return nil }
        let name = URL(fileURLWithPath: output).lastPathComponent
        return name.lowercased().hasSuffix(".mpd") ? name : StreamingPackage.manifestName
    }

    /// The path whose directory's space and permissions decide whether a failure is the disk's: the folder or a file.
    public var faultPath: String { uploaded == nil ? places[0] : temporaries[0] }

    /// Moves every verified temporary into place. An existing folder is replaced (the command refused it before
    /// the job began unless told to overwrite); a file already moved is removed again if a later one fails.
    /// `mode`: the files' permission bits (`--output-mode`), the folders' derived from it.
    public func commit(mode: Int? = nil) throws(TesseraError) {
        if let uploaded { return try upload(into: uploaded) }
        guard packaging.isStreaming else {
            for (index, temporary) in temporaries.enumerated() {
                do { try OutputPath.commit(temporary, to: places[index], mode: mode) } catch {
                    for placed in places[..<index] { try? FileManager.default.removeItem(atPath: placed) }
                    for rest in temporaries[(index + 1)...] { try? FileManager.default.removeItem(atPath: rest) }
                    throw error
                }
            }
            return
        }
        try OutputPath.commitFolder(temporaryFolder, to: places[0], mode: mode)
    }

    /// Removes whatever of the outputs is still temporary.
    public func discard() {
        for temporary in temporaries { try? FileManager.default.removeItem(atPath: temporary) }
    }

    /// Removes the outputs after they were moved into place (the job was canceled between the check and the rename).
    public func removePlaced() {
        if let uploaded { return ObjectUpload.remove(uploaded.withValue { $0 }) }
        for place in places { try? FileManager.default.removeItem(atPath: place) }
    }

    /// Puts the verified files in S3: each rung's MP4, or the folder's files under the playlist's prefix with the
    /// playlists and manifests last. The local copies go either way; a failure removes what was put.
    private func upload(into uploaded: Locked<[S3Location]>) throws(TesseraError) {
        defer { discard() }
        var files: [(local: String, object: String)]
        if packaging.isStreaming {
            let folder = temporaryFolder
            let names = ((FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []).filter {
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: folder + "/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
            }
            // Media and init segments first, then media playlists and manifests, the master playlist last.
            func rank(_ name: String) -> Int {
                if name == masterName { return 2 }
                return [".m3u8", ".mpd"].contains(where: name.lowercased().hasSuffix) ? 1 : 0
            }
            files = names.sorted { (rank($0), $0) < (rank($1), $1) }.map { (folder + "/" + $0, places[0] + "/" + $0) }
        } else {
            files = Array(zip(temporaries, places))
        }
        for file in files {
            do throws(TesseraError) {
                guard let location = S3Location(url: file.object) else { throw .output(file.object, "not an object URL") }
                try ObjectUpload.upload(file.local, to: location)
                uploaded.withValue { $0.append(location) }
            } catch {
                removePlaced()
                throw error
            }
        }
    }
}
