import Platform

/// stdout and stderr, written unbuffered (a killed process has printed all it said). Only the
/// main thread prints.
enum Console {
    /// Set once a write to stdout failed (e.g. the reader of a pipe went away).
    nonisolated(unsafe) private(set) static var outputIsBroken = false

    static func out(_ text: String) {
        if !StandardStream.output.write(text) { outputIsBroken = true }
    }

    /// One line on stderr.
    static func error(_ line: String) {
        StandardStream.error.write(line + "\n")
    }

    static var stdoutIsTerminal: Bool { StandardStream.output.isTerminal }
}
