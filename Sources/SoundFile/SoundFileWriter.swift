import CSndFile
import Glibc

/// Writes interleaved float frames with libsndfile. Owns the `SNDFILE*` and the descriptor under
/// it; one thread only (the writer thread) may use an instance after creation.
///
/// The file is created once, here, with `open(2)` (`O_CREAT | O_EXCL | O_NOFOLLOW`), and kept
/// open until `close()`: nothing is ever opened through an existing path, so a take never
/// truncates, splices into or writes through what is already there (a file, a symbolic link, a
/// FIFO, a device). Replacing an existing file is a new file under a temporary name in the same
/// folder renamed over the path: a symbolic link there is replaced itself, never followed.
public final class SoundFileWriter {
    public let path: String
    public let format: AudioFileFormat
    public let channelCount: Int
    public let sampleRate: Int
    public private(set) var framesWritten: Int64 = 0
    private var file: OpaquePointer?
    /// Device and inode of the file this writer created (for `discard()`).
    private let identity: (device: UInt64, inode: UInt64)
    /// The descriptor the file was created on, which `sync()` flushes. libsndfile owns it (it
    /// closes it with the file); valid while `file` is open.
    private let descriptor: Int32

    /// Creates the file. A `.wav` take is written as RF64 with libsndfile's auto-downgrade: the
    /// header stays plain WAV while the file is under 4 GB and becomes RF64 past it.
    /// The header is written when the file is created, when the caller asks (`updateHeader()`)
    /// and at `close()`; a killed process leaves a file that opens and holds the frames written
    /// up to the last header update.
    ///
    /// Without `replacesExisting` anything at `path` (even a dangling symbolic link) is refused
    /// (`isAlreadyThere`). With it, a regular file, a symbolic link to one or a dangling link at
    /// `path` is replaced by the new file (the link itself, never what it points at); a
    /// directory, device, FIFO, socket or a link to one is refused. Any thread, then only the
    /// thread that writes.
    public init(
        path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int, replacesExisting: Bool = false
    ) throws(SoundFileError) {
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
        descriptor = try replacesExisting ? Self.createReplacing(path) : Self.createExclusively(path)
        var created = stat()
        fstat(descriptor, &created)
        identity = (UInt64(created.st_dev), UInt64(created.st_ino))
        // libsndfile owns the descriptor from here (close_desc): it closes it at sf_close, and
        // on failure.
        guard let handle = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            let error = SoundFileError.fromLibrary(.open, path: path, file: nil)
            Self.unlinkIfStill(path, identity)
            throw error
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

    private static let creationFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC

    /// A new file at `path`, or the system's reason (EEXIST when anything is there).
    private static func createExclusively(_ path: String) throws(SoundFileError) -> Int32 {
        let descriptor = open(path, creationFlags, 0o644)
        if descriptor < 0 { throw systemError(path) }
        return descriptor
    }

    /// A new file under a temporary name next to `path`, renamed over it when what is there
    /// may be replaced (see `init`).
    private static func createReplacing(_ path: String) throws(SoundFileError) -> Int32 {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var temporary = ""
        var descriptor: Int32 = -1
        for _ in 0 ..< 100 {
            temporary = folder + ".\(name).micmon-\(getpid())-\(UInt32.random(in: 0 ... .max))"
            descriptor = open(temporary, creationFlags, 0o644)
            if descriptor >= 0 || errno != EEXIST { break }
        }
        if descriptor < 0 { throw systemError(path) }
        if let refusal = replacementRefusal(path) {
            unlink(temporary)
            Glibc.close(descriptor)
            throw SoundFileError(.create, path: path, message: refusal, systemCode: EEXIST)
        }
        if rename(temporary, path) != 0 {
            let error = systemError(path)
            unlink(temporary)
            Glibc.close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Why what is at `path` may not be replaced, or nil (nothing, a regular file, a symbolic
    /// link to one, a dangling link).
    private static func replacementRefusal(_ path: String) -> String? {
        var entry = stat()
        guard lstat(path, &entry) == 0 else { return nil }
        var kind = entry.st_mode & S_IFMT
        if kind == S_IFLNK {
            var target = stat()
            guard stat(path, &target) == 0 else { return nil }
            kind = target.st_mode & S_IFMT
        }
        return kind == S_IFREG ? nil : "not a regular file; only a regular file is replaced"
    }

    private static func systemError(_ path: String) -> SoundFileError {
        let code = errno
        return SoundFileError(.create, path: path, message: String(cString: strerror(code)), systemCode: code)
    }

    /// Removes `path` if it is still the file with this identity (nobody replaced it since).
    private static func unlinkIfStill(_ path: String, _ identity: (device: UInt64, inode: UInt64)) {
        var entry = stat()
        if lstat(path, &entry) == 0 && UInt64(entry.st_dev) == identity.device
            && UInt64(entry.st_ino) == identity.inode
        {
            unlink(path)
        }
    }

    /// Closes the file and removes it from `path` if it is still the file this writer created
    /// (for a take that must leave nothing behind). Writer thread.
    public func discard() {
        if let handle = file { sf_close(handle) }
        file = nil
        Self.unlinkIfStill(path, identity)
    }

    deinit {
        if let file { sf_close(file) }
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

    /// `updateHeader()`, then `fdatasync`: the frames written so far and the header that counts
    /// them reach the device, so a power cut loses no more than a `kill -9` does. Throws the
    /// system's reason when the flush fails (an I/O error). Writer thread.
    public func sync() throws(SoundFileError) {
        guard file != nil else { return }
        updateHeader()
        if fdatasync(descriptor) != 0 {
            // A file that cannot be synchronized at all (EINVAL, ENOTSUP: no such file system
            // support) still takes its data: only the flush is lost, not the take.
            if errno == EINVAL || errno == ENOTSUP { return }
            let text = String(cString: strerror(errno))
            throw SoundFileError(.write, path: path, message: "fdatasync: " + text)
        }
    }

    /// Finalizes the header and closes the file. Safe to call twice. Writer thread.
    public func close() throws(SoundFileError) {
        guard let handle = file else { return }
        file = nil
        let code = sf_close(handle)
        if code != 0 {
            let text = sf_error_number(code).map { String(cString: $0) } ?? "error \(code)"
            throw SoundFileError(.close, path: path, message: text)
        }
    }
}
