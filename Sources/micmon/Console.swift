import Platform
import TerminalUI

/// stdout and stderr, written unbuffered (a killed process has printed all it said). Only the
/// main thread prints.
///
/// A stream that fails (EPIPE when the reader of a pipe went away, ENOSPC on a full device, EIO)
/// is given up: nothing more is written to it, and for stdout one line on stderr says why. That
/// is all a failing stream does: no command looks at it, so a take or a playback always runs to
/// its own end (duration, end of file, signal, server) and its exit code says how that went.
enum Console {
    /// Why stdout failed, once it has; nothing is written to it after that. Main thread.
    nonisolated(unsafe) private(set) static var outputFailure: SystemError?
    /// Why stderr failed, once it has. Main thread.
    nonisolated(unsafe) private(set) static var errorFailure: SystemError?

    /// Where `out` writes: stdout, or stderr when stdout carries the take (`record -`), so
    /// nothing but the take reaches stdout then. Main thread, before the session starts.
    nonisolated(unsafe) static var display: StandardStream = .output

    /// Writes `text` to stdout (or `display`), unless it has failed before.
    static func out(_ text: String) {
        guard outputFailure == nil else { return }
        if display == .error {
            guard errorFailure == nil else { return }
            if let failure = StandardStream.error.writeAll(text) { errorFailure = failure }
            return
        }
        if let failure = StandardStream.output.writeAll(text) {
            outputFailure = failure
            error("micmon: " + Messages.outputFailed(failure.description))
        }
    }

    /// One line on stderr, control characters shown as "?" (a file or port name cannot move the
    /// cursor or start a line of its own), unless stderr has failed before.
    static func error(_ line: String) {
        guard errorFailure == nil else { return }
        if let failure = StandardStream.error.writeAll(TextFormat.printable(line) + "\n") { errorFailure = failure }
    }

    static var stdoutIsTerminal: Bool { StandardStream.output.isTerminal }
}
