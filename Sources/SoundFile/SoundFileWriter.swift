import CSndFile
import Glibc

/// Writes interleaved float frames with libsndfile. Owns the `SNDFILE*` and the descriptor under
/// it; one thread only (the writer thread) may use an instance after creation.
///
/// The file is created once, here, under a temporary name in FILE's folder (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`), locked (`flock`, exclusive, held until `close()`) and then placed at `path`:
/// `link(2)`, which fails when anything is there, for a new file; `rename(2)` over a regular file
/// or a link with `replacesExisting`, after taking the lock of the file it replaces, so a take
/// another micmon is still writing (it holds that lock) is never replaced. Nothing is ever
/// opened for writing through an existing path, so a take never truncates, splices into or
/// writes through what is already there (a file, a symbolic link, a FIFO, a device); a symbolic
/// link at `path` is replaced itself, never followed.
public final class SoundFileWriter {
    /// When the file appears at `path`.
    public enum Placement: Sendable {
        /// At creation: a take that is live at `path` from its first frame, so a killed process
        /// leaves it there.
        case atCreation
        /// At `close()`: the file stays under its temporary name until it is complete, so `path`
        /// (and whatever it replaces) is untouched by a run that fails or is killed.
        case atClose
    }

    public let path: String
    public let format: AudioFileFormat
    public let channelCount: Int
    public let sampleRate: Int
    public private(set) var framesWritten: Int64 = 0
    /// The open file (nil once closed); for the chunk commands in this module's other files.
    private(set) var file: OpaquePointer?
    /// Device and inode of the file this writer created (for `discard()`).
    private let identity: (device: UInt64, inode: UInt64)
    /// The descriptor the file was created on, which `sync()` flushes. libsndfile owns it (it
    /// closes it with the file); valid while `file` is open.
    private let descriptor: Int32
    /// The temporary name while the file is not yet at `path` (`Placement.atClose`), else nil.
    private var temporaryPath: String?
    private let replacesExisting: Bool
    /// Writes to a stream that cannot seek (`init(streamingTo:)`): no header rewrite, no flush.
    public let isStream: Bool

    /// Writes the take to `descriptor`, a pipe or anything else that cannot seek (`record -`):
    /// libsndfile writes the header once, at the start, and never seeks back (only a container
    /// whose header needs no seek can stream, `ContainerFormat.streams`). The descriptor stays
    /// the caller's (libsndfile does not close it). `path` names it in messages. Any thread,
    /// then only the thread that writes.
    public init(
        streamingTo descriptor: Int32, path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int
    ) throws(SoundFileError) {
        self.path = path
        self.format = format
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        replacesExisting = false
        isStream = true
        self.descriptor = descriptor
        identity = (0, 0)
        if !format.container.streams {
            throw SoundFileError(
                .format, path: path,
                message: "\(format.container.rawValue) cannot be written to a pipe (au or flac can)")
        }
        if let refusal = format.refusal(sampleRate: sampleRate, channels: channelCount) {
            throw SoundFileError(.format, path: path, message: refusal)
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        info.format = format.sfFormat
        guard let handle = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_FALSE)) else {
            let operation: SoundFileError.Operation = sf_error(nil) == Int32(SF_ERR_SYSTEM) ? .open : .format
            throw SoundFileError.fromLibrary(operation, path: path, file: nil)
        }
        file = handle
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    }

    /// Creates the file. A `.wav` take is written as RF64 with libsndfile's auto-downgrade: the
    /// header stays plain WAV while the file is under 4 GB and becomes RF64 past it.
    /// The header is written when the file is created, when the caller asks (`updateHeader()`)
    /// and at `close()`; a killed process leaves a file that opens and holds the frames written
    /// up to the last header update.
    ///
    /// Without `replacesExisting` anything at `path` (even a dangling symbolic link) is refused
    /// (`isAlreadyThere`). With it, a regular file, a symbolic link to one or a dangling link at
    /// `path` is replaced by the new file (the link itself, never what it points at); a
    /// directory, device, FIFO, socket or a link to one is refused, and so is a file another
    /// writer still holds (`isInUse`). With `placement: .atClose` these checks are made again,
    /// and the file placed, at `close()`. Any thread, then only the thread that writes.
    public init(
        path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int, replacesExisting: Bool = false,
        placement: Placement = .atCreation
    ) throws(SoundFileError) {
        self.path = path
        self.format = format
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.replacesExisting = replacesExisting
        isStream = false
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        info.format = format.sfFormat
        if let refusal = format.refusal(sampleRate: sampleRate, channels: channelCount) {
            throw SoundFileError(.format, path: path, message: refusal)
        }
        let created = try Self.createTemporary(near: path)
        do throws(SoundFileError) {
            if placement == .atCreation {
                try Self.place(created.path, at: path, replacing: replacesExisting)
            } else {
                temporaryPath = created.path
            }
        } catch {
            unlink(created.path)
            Glibc.close(created.descriptor)
            throw error
        }
        descriptor = created.descriptor
        var status = stat()
        fstat(descriptor, &status)
        identity = (UInt64(status.st_dev), UInt64(status.st_ino))
        // libsndfile owns the descriptor from here (close_desc): it closes it at sf_close, and
        // on failure.
        // A .wav take is opened as RF64 (auto-downgraded below).
        if format.container == .wav { info.format = ContainerFormat.rf64.majorFormat | format.encoding.subtype }
        guard let handle = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            // On a new, empty file anything but a system error is the codec refusing what it was
            // given (Opus at 44.1 kHz): a format error, in libsndfile's words.
            let operation: SoundFileError.Operation = sf_error(nil) == Int32(SF_ERR_SYSTEM) ? .open : .format
            let error = SoundFileError.fromLibrary(operation, path: path, file: nil)
            Self.unlinkIfStill(temporaryPath ?? path, identity)
            throw error
        }
        file = handle
        do throws(SoundFileError) {
            try Self.applyCodecSettings(format, to: handle, path: path)
        } catch {
            sf_close(handle)
            Self.unlinkIfStill(temporaryPath ?? path, identity)
            throw error
        }
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

    /// A lossy codec's quality and bitrate mode, before any frame is written. Judged by the
    /// file's error state, not the command's result: libsndfile 1.2.0's MPEG encoder returns
    /// false from commands that took effect (lame's 0 for success).
    private static func applyCodecSettings(
        _ format: AudioFileFormat, to handle: OpaquePointer, path: String
    ) throws(SoundFileError) {
        if var mode = format.bitrateMode?.libraryValue {
            // SAFETY: SFC_SET_BITRATE_MODE reads one Int32, the size passed.
            sf_command(handle, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
            if sf_error(handle) != Int32(SF_ERR_NO_ERROR) {
                throw SoundFileError.fromLibrary(.format, path: path, file: handle)
            }
        }
        if let quality = format.quality {
            var level = min(max(1 - quality, 0), 1)
            // SAFETY: SFC_SET_COMPRESSION_LEVEL reads one Double, the size passed.
            sf_command(handle, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
            if sf_error(handle) != Int32(SF_ERR_NO_ERROR) {
                throw SoundFileError.fromLibrary(.format, path: path, file: handle)
            }
        }
    }

    private static let creationFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC

    /// A new, locked file under a temporary name in `path`'s folder (hidden: `.NAME.micmon-…`).
    private static func createTemporary(near path: String) throws(SoundFileError) -> (
        path: String, descriptor: Int32
    ) {
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
        // A new file nobody else can have opened yet: the lock is always granted. Where the file
        // system has no locks (ENOLCK, EINVAL) the take goes on unlocked.
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
        return (temporary, descriptor)
    }

    /// Puts the file at `temporary` at `path`: a new name that fails when anything is there, or
    /// (`replacing`) a rename over what may be replaced. The temporary name is gone on success.
    private static func place(_ temporary: String, at path: String, replacing: Bool) throws(SoundFileError) {
        if replacing {
            if let refusal = replacementRefusal(path) {
                throw SoundFileError(.create, path: path, message: refusal, systemCode: EEXIST)
            }
            // The file being replaced, locked for the rename: a writer that still holds it
            // refuses the lock, and its take is left alone.
            let existing = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            defer { if existing >= 0 { Glibc.close(existing) } }
            if existing >= 0 && flock(existing, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK {
                throw SoundFileError(
                    .create, path: path,
                    message: "another micmon is writing it (it holds the file's lock); not replaced",
                    systemCode: EBUSY)
            }
            if rename(temporary, path) != 0 { throw systemError(path) }
            return
        }
        if link(temporary, path) == 0 {
            unlink(temporary)
            return
        }
        let code = errno
        // A file system without hard links (EPERM, ENOTSUP): a rename that is refused when
        // anything is there by a look just before it; the look and the rename are not one step.
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP else {
            throw SoundFileError(.create, path: path, message: String(cString: strerror(code)), systemCode: code)
        }
        var entry = stat()
        if lstat(path, &entry) == 0 || errno != ENOENT {
            throw SoundFileError(.create, path: path, message: String(cString: strerror(EEXIST)), systemCode: EEXIST)
        }
        if rename(temporary, path) != 0 { throw systemError(path) }
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
        if isStream { return }
        if let temporary = temporaryPath {
            unlink(temporary)
            temporaryPath = nil
        } else {
            Self.unlinkIfStill(path, identity)
        }
    }

    deinit {
        if let file { sf_close(file) }
        if let temporaryPath { unlink(temporaryPath) }
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
        if written != frames && isStream && errno == EPIPE {
            throw SoundFileError(.write, path: path, message: String(cString: strerror(EPIPE)), systemCode: EPIPE)
        }
        if written != frames {
            throw SoundFileError.fromLibrary(.write, path: path, file: file)
        }
    }

    /// Rewrites the header for the frames written so far (`SFC_UPDATE_HEADER_NOW`: a seek to
    /// the start, one write, a seek back), so the file opens with all of them even if the
    /// process dies before `close()`. Writer thread.
    public func updateHeader() {
        guard let file, !isStream else { return }
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    /// `updateHeader()`, then `fdatasync`: the frames written so far and the header that counts
    /// them reach the device, so a power cut loses no more than a `kill -9` does. Throws the
    /// system's reason when the flush fails (an I/O error). Writer thread.
    public func sync() throws(SoundFileError) {
        guard file != nil, !isStream else { return }
        updateHeader()
        if fdatasync(descriptor) != 0 {
            // A file that cannot be synchronized at all (EINVAL, ENOTSUP: no such file system
            // support) still takes its data: only the flush is lost, not the take.
            if errno == EINVAL || errno == ENOTSUP { return }
            let text = String(cString: strerror(errno))
            throw SoundFileError(.write, path: path, message: "fdatasync: " + text)
        }
    }

    /// Finalizes the header and closes the file; then, for a WAV or RF64 file with `cues`,
    /// appends the cue chunks after its data (`CueChunks`); with `Placement.atClose`, then puts
    /// it at `path` (the temporary file is removed when that fails). Safe to call twice. Writer
    /// thread.
    public func close(cues: [CuePoint] = []) throws(SoundFileError) {
        guard let handle = file else { return }
        file = nil
        let code = sf_close(handle)
        if code != 0 {
            let text = sf_error_number(code).map { String(cString: $0) } ?? "error \(code)"
            throw SoundFileError(.close, path: path, message: text)
        }
        if format.container.carriesCuePoints && !cues.isEmpty {
            try Self.appendChunks(CueChunks.bytes(cues), to: temporaryPath ?? path, identity: identity)
        }
        guard let temporary = temporaryPath else { return }
        temporaryPath = nil
        do throws(SoundFileError) {
            try Self.place(temporary, at: path, replacing: replacesExisting)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Appends RIFF chunks at the end of the closed file at `path` (if it is still this writer's
    /// file) and makes the RIFF size (or RF64's `ds64` RIFF size) cover them. The chunks reach
    /// the device before the size does, so a failure leaves the file as libsndfile closed it
    /// (a reader ignores bytes past the RIFF size). Writer thread.
    private static func appendChunks(
        _ chunks: [UInt8], to path: String, identity: (device: UInt64, inode: UInt64)
    ) throws(SoundFileError) {
        let descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw systemError(path) }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, UInt64(status.st_dev) == identity.device,
            UInt64(status.st_ino) == identity.inode
        else {
            throw SoundFileError(.write, path: path, message: "the file was replaced before its cues were written")
        }
        var end = Int(status.st_size)
        var bytes = chunks
        // A chunk starts on an even offset (libsndfile pads odd data, but check).
        if end % 2 == 1 { bytes.insert(0, at: 0) }
        var header = [UInt8](repeating: 0, count: 28)
        guard pread(descriptor, &header, 28, 0) == 28 else { throw systemError(path) }
        let marker = String(decoding: header[0 ..< 4], as: UTF8.self)
        guard marker == "RIFF" || (marker == "RF64" && String(decoding: header[12 ..< 16], as: UTF8.self) == "ds64")
        else { throw SoundFileError(.write, path: path, message: "not a RIFF or RF64 file; no cues written") }
        if !writeAll(bytes, to: descriptor, at: end) { throw systemError(path) }
        end += bytes.count
        if fdatasync(descriptor) != 0 && errno != EINVAL && errno != ENOTSUP { throw systemError(path) }
        let riffSize = UInt64(end - 8)
        var size: [UInt8] = []
        if marker == "RIFF" {
            guard riffSize <= UInt64(UInt32.max) else { return }
            for shift in stride(from: 0, to: 32, by: 8) { size.append(UInt8(truncatingIfNeeded: riffSize >> shift)) }
        } else {
            for shift in stride(from: 0, to: 64, by: 8) { size.append(UInt8(truncatingIfNeeded: riffSize >> shift)) }
        }
        if !writeAll(size, to: descriptor, at: marker == "RIFF" ? 4 : 20) { throw systemError(path) }
        if fdatasync(descriptor) != 0 && errno != EINVAL && errno != ENOTSUP { throw systemError(path) }
    }

    /// `pwrite`s all of `bytes` at `offset`, again after a short write or EINTR.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, at offset: Int) -> Bool {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                pwrite(descriptor, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += written
        }
        return true
    }
}
