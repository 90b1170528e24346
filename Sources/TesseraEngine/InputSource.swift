import FFmpegKit
import Foundation
import S3Kit
import TesseraCore

/// Where a job's input is read from: a local file, or an object in S3 (`s3://bucket/key`), read in ranged GETs
/// pinned by its ETag. The credentials come from this process's environment and the AWS files; they never leave it.
public enum InputSource: Sendable {
    case file(String)
    case object(S3Location)

    public init(_ path: String) {
        self = S3Location(url: path).map { .object($0) } ?? .file(path)
    }

    /// The path a job records: an `s3://` URL as given, a file's path made absolute and standard.
    public static func standardized(_ path: String) -> String {
        S3Location.isS3(path) ? path : URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// A client for this process's S3 configuration; a configuration that cannot be resolved is one line naming `subject`.
    public static func client(for subject: String) throws(TesseraError) -> S3Client {
        let configuration: S3Configuration
        do {
            configuration = try S3Configuration.resolve(environment: ProcessInfo.processInfo.environment) {
                try? String(contentsOfFile: $0, encoding: .utf8)
            }
        } catch {
            throw TesseraError(.settings, subject, error.message)
        }
        do { return try S3Client(configuration: configuration) } catch { throw .failure(error) }
    }

    /// The object's size and ETag, or why it cannot be read (missing, refused, wrong region), in one line naming it.
    public static func head(_ location: S3Location) throws(TesseraError) -> S3ObjectInfo {
        do { return try client(for: location.description).head(location) } catch let error as S3Error {
            throw .failure(error)
        } catch {
            throw .input(location.description, "\(error)")
        }
    }

    /// The object opened for libavformat, read only while it has the ETag `object` gives.
    static func open(_ location: S3Location, _ object: S3ObjectInfo, probedStreams: Int? = nil) throws(TesseraError) -> MediaInput {
        let reader = S3ObjectReader(client: try client(for: location.description), location: location, object: object)
        do {
            return try MediaInput(source: reader, name: location.description, probedStreams: probedStreams)
        } catch {
            throw .input(location.description, "not a media file libavformat can read (\(error.message))")
        }
    }
}

extension TesseraError {
    /// An S3 failure, in one line naming the object.
    static func failure(_ error: S3Error) -> TesseraError { .input(error.object, error.detail) }

    /// What stopped `input`'s reads when its bytes come from S3 (the object replaced mid-job); nil for a file.
    static func sourceFailure(_ input: MediaInput) -> TesseraError? {
        (input.sourceFailure as? S3Error).map(failure)
    }
}

extension ProbeResult {
    /// The probed input opened again: the file, or the object at the ETag it was probed at (`etag`: the job's pin).
    func openInput(probedStreams: Int?, etag: String? = nil) throws(FFmpegError) -> MediaInput {
        guard let object, let location = S3Location(url: path) else { return try MediaInput(path: path, probedStreams: probedStreams) }
        do {
            return try InputSource.open(location, S3ObjectInfo(size: object.size, etag: etag ?? object.etag), probedStreams: probedStreams)
        } catch {
            throw FFmpegError(error.problem, call: "avformat_open_input")
        }
    }
}
