import FFmpegKit
import Foundation
import S3Kit
import TesseraCore

/// Tasks whose workers read their own bytes: for an `s3://` input stored as MP4 or QuickTime, a task names
/// its packets' byte ranges in the object with a presigned GET for them (`SourceRanges`) instead of carrying
/// the bytes, so the coordinator moves no source bytes and workers need no credentials.
///
/// Used only where the probed positions give exactly the demuxer's bytes, as `DirectPackets` checks for a
/// file: every packet has a position, and the first packets read both ways agree byte for byte. Other
/// containers (Matroska, MPEG-TS) interleave framing with a packet's bytes; their tasks carry the packets.
final class ObjectPackets {
    let location: S3Location
    let etag: String
    let client: S3Client
    /// How long each task's URL stays valid (`SourceRanges.urlLifetime`).
    let urlSeconds: Int

    init?(plan: JobPlan, input: MediaInput, packet: Packet, urlSeconds: Int) {
        let probe = plan.probe
        guard let location = S3Location(url: plan.inputPath), let object = probe.object, probe.formatName.hasPrefix("mov,"),
              probe.packets.allSatisfy({ $0.position != nil }), let client = try? InputSource.client(for: plan.inputPath) else { return nil }
        let etag = plan.inputIdentity?.etag ?? object.etag
        guard DirectPackets.agreesWithDemuxer(probe, input, packet, read: { position, size in
            try? client.get(location, range: position..<(position + Int64(size)), ifMatch: etag)
        }) else { return nil }
        self.location = location
        self.etag = etag
        self.client = client
        self.urlSeconds = urlSeconds
    }

    /// The payload of `packets` with `header`: records with timestamps and flags and no data, and the ranges to
    /// read them from under a URL presigned now.
    func payload(header: SegmentTask.Header, packets: ArraySlice<PacketInfo>) -> [UInt8]? {
        var header = header
        header.source = SourceRanges(url: client.presignedGET(location, expires: urlSeconds), object: location.description, etag: etag,
                                     positions: packets.compactMap(\.position), sizes: packets.map(\.size))
        return SegmentTask.write(header: CanonicalJSON.data(header), packets: packets.count, dataBytes: 0) { put in
            for p in packets { put(p.pts, p.dts, p.duration, p.mediaFlags, 0) { _ in true } }
            return true
        }
    }
}

extension SegmentTask {
    /// The task with its packets' bytes read through its presigned URL (`header.source`), as if the payload had
    /// carried them; the task itself when it did. A read refused, expired or cut off throws, naming the object.
    public func readingSource() throws(TesseraError) -> SegmentTask {
        guard let source = header.source else { return self }
        let bytes: [[UInt8]]?
        do {
            let reader = try S3PresignedReader()
            bytes = try source.packetBytes { (span: Range<Int64>) throws(S3Error) in
                try reader.get(source.url, range: span, ifMatch: source.etag, object: source.object)
            }
        } catch {
            throw .input(source.object, "segment \(header.segment.index)'s bytes could not be read (\(error.detail))")
        }
        guard let bytes else { throw .input(source.object, "segment \(header.segment.index)'s bytes came back short") }
        var task = self
        for i in task.packets.indices { task.packets[i].data = bytes[i] }
        task.header.source = nil
        return task
    }
}
