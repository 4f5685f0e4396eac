// The Broadcast WAV `bext` chunk (EBU Tech 3285) through libsndfile's SFC_SET_BROADCAST_INFO /
// SFC_GET_BROADCAST_INFO. Setting: the writer's thread, before the file's first frame. Reading:
// the reader's thread.

import CSndFile

/// What a `bext` chunk says of a take: who wrote it, when its first sample was captured (date,
/// time of day and `TimeReference`, the samples since midnight), and how it was coded.
///
/// libsndfile 1.2.0 writes it into WAV and RF64 only (`ContainerFormat.carriesBroadcastInfo`;
/// W64 is refused), in the header, which every header update rewrites, so it survives a
/// `kill -9`. It must be set before the first frame is written (later the command fails with
/// "file already has audio data"), except that once set it may be set again with a coding
/// history of the same length. libsndfile appends a coding-history line of its own
/// (`A=PCM,F=…,W=…,M=…,T=libsndfile-1.2.0`) after the caller's; its `W=` says 24 for float files.
public struct BroadcastInfo: Sendable, Equatable {
    /// Free text (`--description`), at most `descriptionLimit` bytes.
    public var description: String
    /// The program that wrote the file (at most 32 bytes).
    public var originator: String
    /// An identifier of the file (at most 32 bytes).
    public var originatorReference: String
    /// The local date of the first sample, `yyyy-mm-dd`.
    public var originationDate: String
    /// The local time of day of the first sample, `hh:mm:ss`.
    public var originationTime: String
    /// The first sample's place in samples since local midnight.
    public var timeReference: UInt64
    /// Lines `A=…,F=…,W=…,M=…,T=…`, each ended by CR LF (added where missing). Read back, it
    /// includes libsndfile's own line.
    public var codingHistory: String

    public static let descriptionLimit = 256
    public static let originatorLimit = 32
    /// The longest coding history micmon sets: libsndfile takes up to 16 KiB with its own line.
    public static let codingHistoryLimit = 8192

    public init(
        description: String = "", originator: String = "", originatorReference: String = "",
        originationDate: String = "", originationTime: String = "", timeReference: UInt64 = 0,
        codingHistory: String = ""
    ) {
        self.description = description
        self.originator = originator
        self.originatorReference = originatorReference
        self.originationDate = originationDate
        self.originationTime = originationTime
        self.timeReference = timeReference
        self.codingHistory = codingHistory
    }

    /// The bytes of `text` that fit `limit`, cut at a character boundary.
    static func bytes(_ text: String, limit: Int) -> [UInt8] {
        var result: [UInt8] = []
        for character in text {
            let encoded = Array(String(character).utf8)
            if result.count + encoded.count > limit { break }
            result += encoded
        }
        return result
    }
}

extension ContainerFormat {
    /// Whether libsndfile writes a `bext` chunk into this container (WAV and RF64; W64 and the
    /// rest carry the same facts in the sidecar only).
    public var carriesBroadcastInfo: Bool { self == .wav || self == .rf64 }
}

/// Copies `bytes` into a fixed C character field (a tuple), NUL-padded.
private func fill<Field>(_ field: inout Field, with bytes: [UInt8]) {
    withUnsafeMutableBytes(of: &field) { raw in
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        for (index, byte) in bytes.prefix(raw.count).enumerated() { raw[index] = byte }
    }
}

/// The text in a fixed C character field, up to its first NUL.
private func text<Field>(of field: Field) -> String {
    withUnsafeBytes(of: field) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
}

extension SoundFileWriter {
    /// Sets the file's `bext` chunk and rewrites the header with it. Before the first frame (or
    /// again with a coding history of the same length). Throws libsndfile's message, or a format
    /// error for a container that has none. Writer thread.
    public func setBroadcastInfo(_ info: BroadcastInfo) throws(SoundFileError) {
        guard let file else { return }
        guard format.container.carriesBroadcastInfo else {
            throw SoundFileError(.command, path: path, message: "\(format.container.rawValue) has no bext chunk")
        }
        let history = BroadcastInfo.bytes(info.codingHistory, limit: BroadcastInfo.codingHistoryLimit)
        let historyOffset = MemoryLayout<SF_BROADCAST_INFO>.offset(of: \SF_BROADCAST_INFO.coding_history) ?? 602
        let size = max(MemoryLayout<SF_BROADCAST_INFO>.size, historyOffset + history.count + 2)
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        // SAFETY: `block` holds at least one SF_BROADCAST_INFO, zeroed; its variable-length
        // coding history runs on past the struct's own 256 bytes inside `size`.
        let bext = block.bindMemory(to: SF_BROADCAST_INFO.self, capacity: 1)
        fill(&bext.pointee.description, with: BroadcastInfo.bytes(info.description, limit: 256))
        fill(&bext.pointee.originator, with: BroadcastInfo.bytes(info.originator, limit: 32))
        fill(&bext.pointee.originator_reference, with: BroadcastInfo.bytes(info.originatorReference, limit: 32))
        fill(&bext.pointee.origination_date, with: BroadcastInfo.bytes(info.originationDate, limit: 10))
        fill(&bext.pointee.origination_time, with: BroadcastInfo.bytes(info.originationTime, limit: 8))
        bext.pointee.time_reference_low = UInt32(truncatingIfNeeded: info.timeReference)
        bext.pointee.time_reference_high = UInt32(truncatingIfNeeded: info.timeReference >> 32)
        bext.pointee.coding_history_size = UInt32(history.count)
        // SAFETY: the history's bytes and a NUL fit between `historyOffset` and `size`.
        let historyStart = block.advanced(by: historyOffset).assumingMemoryBound(to: UInt8.self)
        for (index, byte) in history.enumerated() { historyStart[index] = byte }
        // SAFETY: SFC_SET_BROADCAST_INFO reads `size` bytes: the struct and its coding history.
        if sf_command(file, Int32(SFC_SET_BROADCAST_INFO), block, Int32(size)) != SF_TRUE {
            throw SoundFileError.fromLibrary(.command, path: path, file: file)
        }
    }
}

extension SoundFileReader {
    /// The file's `bext` chunk, or nil when it has none. Reader's thread.
    public var broadcastInfo: BroadcastInfo? {
        guard let file else { return nil }
        let size = 16384
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        // SAFETY: SFC_GET_BROADCAST_INFO writes at most `size` bytes: the struct and its history.
        guard sf_command(file, Int32(SFC_GET_BROADCAST_INFO), block, Int32(size)) == SF_TRUE else { return nil }
        let bext = block.bindMemory(to: SF_BROADCAST_INFO.self, capacity: 1).pointee
        let historyOffset = MemoryLayout<SF_BROADCAST_INFO>.offset(of: \SF_BROADCAST_INFO.coding_history) ?? 602
        let historyCount = min(Int(bext.coding_history_size), size - historyOffset - 1)
        // SAFETY: the history lies within the block, `historyCount` bytes from `historyOffset`.
        let history = UnsafeRawBufferPointer(start: block.advanced(by: historyOffset), count: historyCount)
        return BroadcastInfo(
            description: text(of: bext.description), originator: text(of: bext.originator),
            originatorReference: text(of: bext.originator_reference),
            originationDate: text(of: bext.origination_date), originationTime: text(of: bext.origination_time),
            timeReference: UInt64(bext.time_reference_high) << 32 | UInt64(bext.time_reference_low),
            codingHistory: String(decoding: history.prefix { $0 != 0 }, as: UTF8.self))
    }
}
