import FFmpegKit
import Foundation
import S3Kit
import TesseraCore

/// Tasks whose workers read their own bytes: for an `s3://` input stored as MP4, QuickTime, Matroska, WebM, AVI,
/// MPEG-TS or MXF, a task names its packets' byte ranges in the object with a presigned GET for them (`SourceRanges`)
/// instead of carrying the bytes, so the coordinator moves no source bytes and workers need no credentials.
///
/// Used only where the worker's reading gives exactly the demuxer's bytes, as `DirectPackets` checks for a
/// file: every packet has a position, and the first packets read both ways agree byte for byte. A Matroska
/// packet follows its block's header (`MatroskaBlockHeader`), read and checked with it; a laced block (frames
/// sharing a position) or a track whose frames are stored compressed does not agree, and its tasks carry the
/// packets. An AVI packet is whole after its chunk's header (`AVIChunkHeader`), also read and checked.
/// MPEG-TS packets are cut in 188-byte pieces, and MXF wraps each in a KLV triplet whose length field
/// varies: the worker demuxes them from a stretch of the object (`StretchDemux`), and the first packets demuxed
/// that way must agree too. Other containers (FLV and MPEG-PS, whose streams appear only as their packets are
/// read) ship their packets.
final class ObjectPackets {
    let location: S3Location
    let etag: String
    let client: S3Client
    /// How long each task's URL stays valid (`SourceRanges.urlLifetime`).
    let urlSeconds: Int
    /// Matroska or AVI: the header before each packet, read and checked with it; nil: packets are whole at their
    /// positions (or, with `transport`, demuxed).
    let header: (any PacketHeader)?
    /// MPEG-TS or MXF: the object's size, the video stream's id and every packet's position, for each task's stretch.
    let transport: (size: Int64, stream: Int, positions: [Int64])?

    init?(plan: JobPlan, input: MediaInput, packet: Packet, urlSeconds: Int) {
        let probe = plan.probe
        guard let location = S3Location(url: plan.inputPath), let object = probe.object, let first = probe.packets.first?.position,
              probe.packets.allSatisfy({ $0.position != nil }), let client = try? InputSource.client(for: plan.inputPath) else { return nil }
        let etag = plan.inputIdentity?.etag ?? object.etag
        let header: (any PacketHeader)?
        if StretchDemux.formats.contains(probe.formatName) {
            // Its workers demux and match by the demuxer's pts; pictures timed by the probe are not matched so.
            guard !probe.packets.contains(where: \.ptsInferred) else { return nil }
            let positions = probe.packets.compactMap(\.position)
            guard let stream = input.streams.first(where: { $0.index == probe.video.index }),
                  let demuxed = Self.firstPacketsDemuxed(probe, positions, location, object, etag, client, stream: stream.containerID) else { return nil }
            var index = 0
            guard DirectPackets.agreesWithDemuxer(probe, input, packet, read: { _, _ in
                defer { index += 1 }
                return demuxed.indices.contains(index) ? demuxed[index] : nil
            }) else { return nil }
            transport = (object.size, stream.containerID, positions)
            header = nil
        } else if probe.formatName.hasPrefix("matroska") {
            // The first block's header says how long each is; frames sharing a position are laced.
            guard Set(probe.packets.map(\.position)).count == probe.packets.count,
                  let bytes = try? client.get(location, range: first..<(first + 12), ifMatch: etag),
                  let block = MatroskaBlockHeader(bytes) else { return nil }
            header = block
            transport = nil
        } else if probe.formatName == "avi" {
            // The first chunk's header names the video stream.
            guard first >= 8, let bytes = try? client.get(location, range: (first - 8)..<first, ifMatch: etag),
                  let chunk = AVIChunkHeader(bytes) else { return nil }
            header = chunk
            transport = nil
        } else {
            guard probe.formatName.hasPrefix("mov,") else { return nil }
            header = nil
            transport = nil
        }
        // Read as a worker reads: the header before each packet's data too, checked.
        let before = Int64(header?.bytesBefore ?? 0), dataOffset = Int64(header?.dataOffset ?? 0)
        guard transport != nil || DirectPackets.agreesWithDemuxer(probe, input, packet, read: { position, size in
            let data = position + dataOffset
            guard data >= before, let bytes = try? client.get(location, range: (data - before)..<(data + Int64(size)), ifMatch: etag) else { return nil }
            guard let header else { return bytes }
            return header.frame(in: bytes[...], size: size).map { Array($0) }
        }) else { return nil }
        self.location = location
        self.etag = etag
        self.client = client
        self.urlSeconds = urlSeconds
        self.header = header
    }

    /// From the demuxer's position of a packet to its data (`PacketHeader.dataOffset`).
    var dataOffset: Int64 { Int64(header?.dataOffset ?? 0) }

    /// The `SourceRanges` version a worker must read for this input's tasks.
    var versionNeeded: Int { header == nil && transport == nil ? 1 : 2 }

    /// The file's first packets demuxed as a worker demuxes a task's (`StretchDemux`), reading the object here.
    static func firstPacketsDemuxed(_ probe: ProbeResult, _ positions: [Int64], _ location: S3Location, _ object: S3ObjectInfo,
                                    _ etag: String, _ client: S3Client, stream: Int) -> [[UInt8]]? {
        let count = min(DirectPackets.checkedPackets, probe.packets.count)
        guard count > 0 else { return nil }
        var pinned = object
        pinned.etag = etag
        let stretch = DemuxedStretch.covering(0, count - 1, positions: positions, objectSize: object.size, stream: stream)
        let reader = S3ObjectReader(client: client, location: location, object: pinned)
        reader.fetchedWhole = stretch.bytes
        return try? StretchDemux.packets(from: reader, name: location.description, stretch: stretch,
                                         expected: probe.packets.prefix(count).map { .init(pts: $0.pts, size: $0.size, key: $0.keyFlag) })
    }

    /// The payload of `packets` with `header`: records with timestamps and flags and no data, and the ranges to
    /// read them from under a URL presigned now.
    func payload(header: SegmentTask.Header, packets: ArraySlice<PacketInfo>) -> [UInt8]? {
        var header = header
        let stretch = transport.map { DemuxedStretch.covering(packets.startIndex, packets.endIndex - 1, positions: $0.positions,
                                                              objectSize: $0.size, stream: $0.stream) }
        header.source = SourceRanges(url: client.presignedGET(location, expires: urlSeconds), object: location.description, etag: etag,
                                     positions: packets.compactMap { $0.position.map { $0 + dataOffset } }, sizes: packets.map(\.size),
                                     header: self.header, demuxed: stretch)
        return SegmentTask.write(header: CanonicalJSON.data(header), packets: packets.count, dataBytes: 0) { put in
            for p in packets { put(p.pts, p.dts, p.duration, p.mediaFlags, 0) { _ in true } }
            return true
        }
    }
}

extension SegmentTask {
    /// The task with its packets' bytes read through its presigned URL (`header.source`), as if the payload had
    /// carried them; the task itself when it did; nil when the bytes read are not the packets the task expects (a
    /// short answer, a block header or a demuxed packet unlike the probe's). A read refused, expired or cut off
    /// throws, naming the object.
    public func readingSource() throws(TesseraError) -> SegmentTask? {
        guard let source = header.source else { return self }
        let bytes: [[UInt8]]?
        do {
            let reader = try S3PresignedReader()
            if let stretch = source.demuxed {
                bytes = try demuxing(stretch, of: source, reader: reader)
            } else {
                bytes = try source.packetBytes { (span: Range<Int64>) throws(S3Error) in
                    try reader.get(source.url, range: span, ifMatch: source.etag, object: source.object)
                }
            }
        } catch {
            throw .input(source.object, "segment \(header.segment.index)'s bytes could not be read (\(error.detail))")
        }
        guard let bytes else { return nil }
        var task = self
        for i in task.packets.indices { task.packets[i].data = bytes[i] }
        task.header.source = nil
        return task
    }

    /// The packets demuxed from `stretch` of the object (`StretchDemux`); nil when they are not as probed or the
    /// demuxer fails on bytes that were read; a failed read throws its `S3Error` (a demuxer may pass over it).
    func demuxing(_ stretch: DemuxedStretch, of source: SourceRanges, reader: S3PresignedReader) throws(S3Error) -> [[UInt8]]? {
        let bytes = S3ObjectReader(presigned: source.url, reader: reader, object: source.object, size: stretch.objectSize, etag: source.etag)
        bytes.fetchedWhole = stretch.bytes
        let expected = packets.enumerated().map { StretchDemux.Expected(pts: $1.pts, size: source.sizes[$0], key: $1.isKey) }
        let packets = try? StretchDemux.packets(from: bytes, name: source.object, stretch: stretch, expected: expected)
        if let failure = bytes.failure { throw failure }
        return packets ?? nil
    }
}
