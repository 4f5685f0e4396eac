import CSndFile
import Glibc

/// Writes interleaved float frames with libsndfile. Owns the `SNDFILE*`; one thread only (the
/// writer thread) may use an instance after creation.
public final class SoundFileWriter {
    public let path: String
    public let format: AudioFileFormat
    public let channelCount: Int
    public let sampleRate: Int
    public private(set) var framesWritten: Int64 = 0
    private var file: OpaquePointer?
    /// The descriptor `sync()` flushes: one the opener handed over (`syncThrough(descriptor:)`,
    /// not owned), or one `sync()` opened on `path` itself (owned, closed with the file); -1
    /// before. libsndfile keeps the descriptor of a file it opened by path to itself (no
    /// `sf_command` returns it).
    private var syncDescriptor: Int32 = -1
    private var ownsSyncDescriptor = false

    /// Creates the file. A `.wav` take is written as RF64 with libsndfile's auto-downgrade: the
    /// header stays plain WAV while the file is under 4 GB and becomes RF64 past it.
    /// The header is written when the file is created, when the caller asks (`updateHeader()`)
    /// and at `close()`; a killed process leaves a file that opens and holds the frames written
    /// up to the last header update. Any thread, then only the thread that writes.
    public init(path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int) throws(SoundFileError) {
        self.path = path
        self.format = format
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        let container: ContainerFormat = format.container == .wav ? .rf64 : format.container
        info.format = container.majorFormat | format.encoding.subtype
        guard sf_format_check(&info) != 0 else {
            throw SoundFileError(
                .open, path: path,
                message: "libsndfile cannot write \(format) with \(channelCount) channels at \(sampleRate) Hz")
        }
        guard let handle = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw SoundFileError.fromLibrary(.open, path: path, file: nil)
        }
        file = handle
        if format.container == .wav {
            sf_command(handle, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
        // No PEAK chunk: it costs a scan of every buffer on the writer thread and is not needed
        // to read the file. Asked only when the file has one (libsndfile's signal-max query
        // answers from it): libsndfile 1.2 *adds* the chunk when told to drop it from a format
        // that had none, as RF64 opens.
        if hasPeakChunk {
            sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        }
        // Out-of-range floats clip instead of wrapping when converted to integers.
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    }

    deinit {
        if let file { sf_close(file) }
        if ownsSyncDescriptor { Glibc.close(syncDescriptor) }
    }

    /// Whether libsndfile keeps a PEAK chunk for this file (and scans every buffer written for
    /// it). False for every take micmon writes. Any thread that may use the instance.
    public var hasPeakChunk: Bool {
        guard let file else { return false }
        var peak = 0.0
        // SAFETY: SFC_GET_SIGNAL_MAX writes one Double, the size passed; it returns SF_TRUE only
        // when the file carries PEAK state.
        return sf_command(file, Int32(SFC_GET_SIGNAL_MAX), &peak, Int32(MemoryLayout<Double>.size)) == SF_TRUE
    }

    /// Appends whole interleaved frames. Throws with libsndfile's message on a short write.
    /// The header does not follow until `updateHeader()` or `close()`. Writer thread.
    public func write(interleaved samples: UnsafeBufferPointer<Float>) throws(SoundFileError) {
        guard let file, let base = samples.baseAddress, samples.count > 0 else { return }
        let frames = Int64(samples.count / channelCount)
        let written = sf_writef_float(file, base, frames)
        if written > 0 { framesWritten += written }
        if written != frames {
            throw SoundFileError.fromLibrary(.write, path: path, file: file)
        }
    }

    /// Rewrites the header for the frames written so far (`SFC_UPDATE_HEADER_NOW`: a seek to
    /// the start, one write, a seek back), so the file opens with all of them even if the
    /// process dies before `close()`. Writer thread.
    public func updateHeader() {
        guard let file else { return }
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    /// Makes `sync()` flush `descriptor`, the one the file was opened on (`sf_open_fd`). The
    /// caller keeps owning it. Writer thread, or before the writer starts.
    public func syncThrough(descriptor: Int32) {
        if ownsSyncDescriptor { Glibc.close(syncDescriptor) }
        syncDescriptor = descriptor
        ownsSyncDescriptor = false
    }

    /// `updateHeader()`, then `fdatasync`: the frames written so far and the header that counts
    /// them reach the device, so a power cut loses no more than a `kill -9` does. Without a
    /// descriptor handed over, the first call opens `path` read-only and flushes through that
    /// (on Linux, `fdatasync` on any descriptor of a file flushes the file's data). Throws the
    /// system's reason when the flush fails (an I/O error). Writer thread.
    public func sync() throws(SoundFileError) {
        guard file != nil else { return }
        updateHeader()
        if syncDescriptor < 0 {
            syncDescriptor = open(path, O_RDONLY | O_CLOEXEC)
            ownsSyncDescriptor = syncDescriptor >= 0
            if syncDescriptor < 0 { return }
        }
        if fdatasync(syncDescriptor) != 0 {
            // A file that cannot be synchronized at all (EINVAL, ENOTSUP: no such file system
            // support) still takes its data: only the flush is lost, not the take.
            if errno == EINVAL || errno == ENOTSUP { return }
            let text = String(cString: strerror(errno))
            throw SoundFileError(.write, path: path, message: "fdatasync: " + text)
        }
    }

    /// Finalizes the header and closes the file. Safe to call twice. Writer thread.
    public func close() throws(SoundFileError) {
        if ownsSyncDescriptor {
            Glibc.close(syncDescriptor)
            ownsSyncDescriptor = false
            syncDescriptor = -1
        }
        guard let handle = file else { return }
        file = nil
        let code = sf_close(handle)
        if code != 0 {
            let text = sf_error_number(code).map { String(cString: $0) } ?? "error \(code)"
            throw SoundFileError(.close, path: path, message: text)
        }
    }
}
