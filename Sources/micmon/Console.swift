import Glibc

/// stdout and stderr, written with write(2) (unbuffered, so a killed process has printed all it
/// said). Only the main thread prints.
enum Console {
    /// Set once a write to stdout failed (e.g. the reader of a pipe went away).
    nonisolated(unsafe) private(set) static var outputIsBroken = false

    static func out(_ text: String) {
        if !write(text, to: STDOUT_FILENO) { outputIsBroken = true }
    }

    /// One line on stderr.
    static func error(_ line: String) {
        _ = write(line + "\n", to: STDERR_FILENO)
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

    private static func write(_ text: String, to descriptor: Int32) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
