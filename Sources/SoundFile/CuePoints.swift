// Cue points of a WAV or RF64 file: the `cue ` chunk and its `LIST`/`adtl` labels, as bytes
// (pure), appended after the data chunk when the file is closed (`SoundFileWriter.close(cues:)`),
// and read back through libsndfile (SFC_GET_CUE). Any thread that owns the file.

import CSndFile

/// A place in a file: a frame and what happened there.
public struct CuePoint: Sendable, Equatable {
    /// The cue's identifier (1, 2, … in the chunk's order).
    public var id: UInt32
    /// The file frame it marks.
    public var frame: UInt32
    /// Its text in the `labl` chunk ("" for none).
    public var label: String

    public init(id: UInt32, frame: UInt32, label: String = "") {
        self.id = id
        self.frame = frame
        self.label = label
    }
}

/// The chunks that carry cue points.
///
/// Why not `SFC_SET_CUE`: libsndfile 1.2.0 takes cues only before the first frame is written
/// ("file already has audio data" after), and writes them only into a plain WAV header; a `.wav`
/// take is opened as RF64 (auto-downgraded while under 4 GB), whose writer drops them, and RF64's
/// reader never reads one. Markers happen while the take runs, so micmon writes the chunks itself
/// once libsndfile has closed the file: after the data chunk, where RIFF allows any chunk (and
/// libsndfile's WAV reader finds them), with the RIFF size (or RF64's `ds64` size) made to cover
/// them. A killed take has its samples (the header is rewritten twice a second) but no cue
/// chunk; its sidecar holds the markers.
public enum CueChunks {
    /// libsndfile 1.2.0 skips a `cue ` chunk of more points than this; later events are only in
    /// the sidecar.
    public static let pointLimit = 2500

    /// `cue ` (every point, `data` chunk, sample offset = frame) then `LIST` `adtl` with one
    /// `labl` per labelled point; each chunk padded to an even size. Empty for no points.
    public static func bytes(_ points: [CuePoint]) -> [UInt8] {
        let points = Array(points.prefix(pointLimit))
        guard !points.isEmpty else { return [] }
        var cue: [UInt8] = []
        append32(UInt32(points.count), to: &cue)
        for point in points {
            append32(point.id, to: &cue)
            append32(point.frame, to: &cue)
            cue += Array("data".utf8)
            append32(0, to: &cue)
            append32(0, to: &cue)
            append32(point.frame, to: &cue)
        }
        var result = chunk("cue ", cue)
        var labels: [UInt8] = Array("adtl".utf8)
        for point in points where !point.label.isEmpty {
            var body: [UInt8] = []
            append32(point.id, to: &body)
            body += Array(point.label.utf8).filter { $0 != 0 } + [0]
            labels += chunk("labl", body)
        }
        if labels.count > 4 { result += chunk("LIST", labels) }
        return result
    }

    /// A RIFF chunk: id, little-endian size, body, a pad byte when the size is odd.
    private static func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        var bytes = Array(id.utf8)
        append32(UInt32(body.count), to: &bytes)
        bytes += body
        if body.count % 2 == 1 { bytes.append(0) }
        return bytes
    }

    private static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}

extension ContainerFormat {
    /// Whether micmon writes cue points into this container (WAV and RF64; the rest have the
    /// sidecar only).
    public var carriesCuePoints: Bool { self == .wav || self == .rf64 }
}

extension SoundFileReader {
    /// The file's cue points as libsndfile reads them (frame = sample offset), labels empty
    /// (libsndfile does not read `labl`); empty when it has none. Reader's thread.
    public var cuePoints: [CuePoint] {
        guard let file else { return [] }
        var count: UInt32 = 0
        // SAFETY: SFC_GET_CUE_COUNT writes one UInt32, the size passed.
        guard sf_command(file, Int32(SFC_GET_CUE_COUNT), &count, Int32(MemoryLayout<UInt32>.size)) == SF_TRUE,
            count > 0
        else { return [] }
        let stride = MemoryLayout<SF_CUE_POINT>.stride
        let size = 8 + Int(count) * stride
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        // SAFETY: SFC_GET_CUE writes the count and at most `size` bytes of points.
        guard sf_command(file, Int32(SFC_GET_CUE), block, Int32(size)) == SF_TRUE else { return [] }
        let stored = min(Int(block.load(as: UInt32.self)), Int(count))
        let offset = MemoryLayout<SF_CUES>.offset(of: \SF_CUES.cue_points) ?? 4
        return (0 ..< stored).map { index in
            // SAFETY: point `index` < `stored` ≤ `count` lies inside the block.
            let point = block.advanced(by: offset + index * stride).assumingMemoryBound(to: SF_CUE_POINT.self).pointee
            return CuePoint(id: UInt32(bitPattern: point.indx), frame: point.sample_offset)
        }
    }
}
