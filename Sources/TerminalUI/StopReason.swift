/// Why a session ended, for every command's summary (text and JSON `"reason"`). Pure values.
public enum StopReason: Sendable, Equatable {
    /// `--duration` reached.
    case durationReached
    /// `play`: the file (and its loops) played to the end.
    case endOfFile
    /// SIGINT (Ctrl-C).
    case interrupted
    /// SIGTERM.
    case terminated
    /// SIGHUP (the terminal or ssh session closed).
    case hungUp
    /// The JACK server shut down or went away.
    case serverGone
    /// The server's sample rate changed (a file cannot change rate).
    case sampleRateChanged
    /// The take could not be written.
    case fileFailed
    /// `play --on-route-loss stop`: the destination ports went away.
    case routeLost
    /// `latency`: the server stopped running process cycles.
    case serverStalled
    /// `play`: the file could not be read on; the reader's reason.
    case readFailed(String)
    /// Capture: no process cycle for the watchdog's limit while the server still answered.
    case cyclesStopped
    /// Record: free space on the take's file system reached `--min-free` (the disk guard).
    case diskSpaceLow
    /// `record`: the `q` key or `micmon stop`.
    case stopRequested
    /// `record -`: the reader of stdout went away (a closed pipe).
    case outputClosed

    /// The reason as the summaries print it.
    public var text: String {
        switch self {
        case .durationReached: return "duration reached"
        case .endOfFile: return "end of file"
        case .interrupted: return "interrupted (SIGINT)"
        case .terminated: return "terminated (SIGTERM)"
        case .hungUp: return "hung up (SIGHUP)"
        case .serverGone: return "the JACK server went away"
        case .sampleRateChanged: return "the server's sample rate changed"
        case .fileFailed: return "the file could not be written"
        case .routeLost: return "route lost"
        case .serverStalled: return "the server stopped running process cycles"
        case .readFailed(let reason): return reason
        case .cyclesStopped: return "the graph stopped calling micmon (no process cycle while the server answered)"
        case .diskSpaceLow: return "free disk space reached --min-free"
        case .stopRequested: return "stopped as asked (the q key or micmon stop)"
        case .outputClosed: return "the reader of stdout went away"
        }
    }
}
