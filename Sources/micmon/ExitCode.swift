/// micmon's exit codes (sysexits-style), documented in `--help` and the README.
enum ExitCode: Int32 {
    /// The session ran and ended as asked (duration reached, SIGINT/SIGTERM/SIGHUP), nothing lost.
    case ok = 0
    /// Bad command line or bad input: nothing was started or created.
    case usage = 64
    /// Internal failure (a bug): please report it.
    case software = 70
    /// No JACK server, or the server went away mid-session (the take is finalized).
    case serverUnavailable = 69
    /// The output file could not be created or written (the take is finalized up to the fault).
    case fileError = 74
    /// The session completed but frames were dropped (listed in the summary; silence in the file).
    case framesDropped = 75
    /// A source chosen for an input was never connected during the take (the input holds
    /// silence): sysexits' EX_NOINPUT, "an input did not exist or was not readable".
    case sourceNeverConnected = 66
    /// The graph stopped calling micmon (no process cycle for `WallClockWatchdog.stallSeconds`)
    /// while the server still answered; the take is finalized with what was delivered. 76 is
    /// sysexits' EX_PROTOCOL, the next one free: the server broke JACK's contract (it runs, but
    /// not micmon's cycles), which neither "server went away" (69) nor "dropped" (75) says.
    case cyclesStopped = 76
    /// The server's sample rate changed: the take ended at the last frame of its rate (a file
    /// holds one rate). Not 69: the server is still there. sysexits' EX_CONFIG, "something was
    /// found in an unconfigured or misconfigured state": the server's configuration changed
    /// under the take.
    case sampleRateChanged = 78
    /// `record -`: the reader of stdout went away (a closed pipe); the take ended cleanly with
    /// what it had taken. 141 is what a shell reports for a program SIGPIPE ended (128 + 13), so
    /// `set -o pipefail` scripts that accept a reader that stops early treat it alike; micmon
    /// ignores SIGPIPE and ends on its own.
    case outputClosed = 141
}
