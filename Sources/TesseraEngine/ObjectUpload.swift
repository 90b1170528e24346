import Foundation
import S3Kit
import TesseraCore

/// Puts a verified local file (a ladder's, a thumbnail) at an S3 key with a multipart upload, part size chosen from the file's size (at
/// least 5 MiB, at most 10,000 parts): the object appears only at CompleteMultipartUpload, and any failure aborts the
/// upload so that no part is left. A file smaller than one part is one PUT.
public enum ObjectUpload {
    public static func upload(_ file: String, to location: S3Location) throws(TesseraError) {
        let object = location.description
        guard let handle = FileHandle(forReadingAtPath: file) else { throw .output(object, "cannot read the finished file \(file)") }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0
        if size < Int64(S3MultipartUpload.minimumPartSize) { return try put(handle, to: location) }
        let upload: S3MultipartUpload
        do {
            upload = S3MultipartUpload(client: try InputSource.client(for: object), location: location, expectedSize: size)
        } catch {
            throw .output(object, error.problem)
        }
        do {
            while true {
                let part: Data
                do { part = try handle.read(upToCount: upload.partSize) ?? Data() } catch {
                    upload.abort()
                    throw TesseraError.output(object, "cannot read the finished file (\(error.localizedDescription))")
                }
                if part.isEmpty { break }
                try upload.write(part)
            }
            try upload.complete()
        } catch let error as S3Error {
            throw .output(error.object, error.detail)
        } catch let error as TesseraError {
            throw error
        } catch {
            upload.abort()
            throw .output(object, "\(error)")
        }
    }

    /// A file smaller than one part (a ladder's segments and playlists, a thumbnail) in one PUT.
    private static func put(_ handle: FileHandle, to location: S3Location) throws(TesseraError) {
        let object = location.description
        let body: Data
        do { body = try handle.readToEnd() ?? Data() } catch {
            throw .output(object, "cannot read the finished file (\(error.localizedDescription))")
        }
        let client = try InputSource.client(for: object)
        do { _ = try client.put(location, body: Array(body)) } catch { throw .output(error.object, error.detail) }
    }

    /// Refuses, before any work, an output whose bucket is missing or whose credentials S3 refuses (named in one
    /// line). Access denied passes: keys may put objects without being allowed to HEAD the bucket.
    public static func checkBucket(_ location: S3Location) throws(TesseraError) {
        let object = location.description
        do { try InputSource.client(for: object).headBucket(location.bucket) } catch let error as S3Error {
            guard error.code != .accessDenied else { return }
            throw .output(object, error.detail)
        } catch let error as TesseraError {
            throw .output(object, error.problem)
        } catch {
            throw .output(object, "\(error)")
        }
    }

    /// Removes a placed object (the job was canceled after it was uploaded). Best effort.
    public static func remove(_ location: S3Location) {
        try? InputSource.client(for: location.description).delete(location)
    }

    /// Removes placed objects, last put first. Best effort.
    public static func remove(_ locations: [S3Location]) {
        guard let first = locations.first, let client = try? InputSource.client(for: first.description) else { return }
        for location in locations.reversed() { try? client.delete(location) }
    }
}
