// Descriptors 0, 1 and 2 made valid at start, and stdout/stderr writes that say why they failed.
// Main thread.

import Glibc

extension StandardStream {
    /// Makes descriptors 0, 1 and 2 valid: each one that is closed (`fcntl(F_GETFD)` fails with
    /// EBADF) is opened on /dev/null (stdin read-only, stdout and stderr write-only). Call it first
    /// in `main`, before libjack or libsndfile opens anything: with a descriptor closed, the next
    /// `open` anywhere in the process would take its number, and what micmon prints to stdout
    /// would go into that file (libjack's metadata database, a take). Returns the descriptors it
    /// opened. Main thread, before any other thread exists.
    @discardableResult
    public static func ensureOpen() -> [Int32] {
        var opened: [Int32] = []
        for descriptor: Int32 in 0 ... 2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            // open takes the lowest free number, which is `descriptor` itself: 0, 1, 2 are
            // checked in order and each lower one is open by now.
            let flags = descriptor == 0 ? O_RDONLY : O_WRONLY
            let fresh = open("/dev/null", flags)
            if fresh < 0 { continue }
            if fresh != descriptor {
                dup2(fresh, descriptor)
                close(fresh)
            }
            opened.append(descriptor)
        }
        return opened
    }

    /// Writes all of `text` like `write(_:)`, but says why the stream refused: nil when all
    /// was written, else the system's reason (EPIPE for a pipe whose reader went away, ENOSPC
    /// for a full device, EIO, EBADF).
    public func writeAll(_ text: String) -> SystemError? {
        var text = text
        let descriptor = rawValue
        return text.withUTF8 { bytes -> SystemError? in
            guard let base = bytes.baseAddress else { return nil }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return .current
                }
                if written == 0 { return SystemError(code: EIO) }
                offset += written
            }
            return nil
        }
    }
}
