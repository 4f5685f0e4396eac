/// The lines micmon writes to stderr about a session (the caller adds the "micmon: " prefix):
/// hints, warnings and what happened along the way. Errors from the libraries bring their own
/// text. Pure; any thread.
public enum Messages {
    /// The one "how to start a JACK server" hint, for every command that found none. `server` is
    /// the name micmon tried.
    public static func startServer(server: String) -> String {
        let named = server == "default" ? "" : " -n \(server)"
        return "start a server first (e.g. `jackd\(named) -d alsa`, or `jackd\(named) -d dummy` without a sound card), "
            + "or try `micmon demo`"
    }

    /// The server shut down while a session ran.
    public static func serverShutDown(server: String, takeFinalized: Bool) -> String {
        "the JACK server '\(TextFormat.printable(server))' shut down"
            + (takeFinalized ? "; the take was finalized" : "")
    }

    /// The rate changed under a take (`to` is 0 when the new rate is not known).
    public static func sampleRateChanged(from: Int, to: Int) -> String {
        "the server's sample rate changed from \(from) Hz" + (to > 0 ? " to \(to) Hz" : "")
            + "; the take was ended at the last frame at \(from) Hz (a file holds one rate)"
    }

    /// `--wait-server` after a rate change: the next take starts at once (the server never left).
    public static func continuingAtNewRate(into path: String?) -> String {
        "continuing at the server's new rate" + (path.map { " into " + TextFormat.printable($0) } ?? "")
    }

    /// An input whose chosen source was never connected to it during the take.
    public static func neverConnected(input: String, source: String) -> String {
        "\(input) was never connected to its source '\(TextFormat.printable(source))' during the take: "
            + "it holds silence"
    }

    public static func serverGaps(frames: UInt64, gaps: UInt64) -> String {
        "the whole graph lost \(frames) frames in \(gaps) gap" + (gaps == 1 ? "" : "s")
            + " (the driver was late); nothing inserted (see the summary)"
    }

    /// micmon's own timeline losses (docs/timeline.md).
    public static func framesMissed(_ frames: UInt64, gaps: UInt64) -> String {
        "the server ran \(frames) frames without micmon in \(gaps) gap" + (gaps == 1 ? "" : "s")
            + " (micmon was late or stopped; JACK cannot tell whether other clients got them)"
    }

    /// PipeWire: short runs of digital silence between sound (`CaptureKernel.noteSilentCycle`).
    public static func silenceUncertain(_ frames: UInt64, runs: UInt64) -> String {
        "\(frames) frames in \(runs) short run" + (runs == 1 ? "" : "s")
            + " of digital silence between sound: the graph may have given micmon silence there while"
            + " the source had sound (JACK cannot tell; the summary lists where)"
    }

    /// `record -`: stdout's reader went away.
    public static func outputClosed(frames: UInt64) -> String {
        "the reader of stdout went away (a closed pipe); the take ended after \(frames) frames (exit 141)"
    }

    public static func framesDropped(_ frames: UInt64) -> String {
        "\(frames) frames were dropped (silence in their place; see the summary)"
    }

    public static func warning(_ text: String) -> String { "warning: " + text }

    /// stdout could not be written (`reason`: EPIPE, ENOSPC, EIO as strerror words it). The session
    /// does not stop for it: the display stops, the take or playback goes on to its own end, and
    /// the exit code is the session's.
    public static func outputFailed(_ reason: String) -> String {
        "stdout cannot be written (\(reason)): nothing more is shown there; the session goes on to its end "
            + "and its exit code says how it ended"
    }

    // MARK: --wait-server

    public static func waitingForServer(_ server: String) -> String {
        "waiting for server '\(TextFormat.printable(server))' to come back (Ctrl-C stops)"
    }

    /// The server is back but not every requested source port is there yet.
    public static func waitingForSources(_ missing: [String]) -> String {
        "the server is back; waiting for source port(s) "
            + missing.map { "'" + TextFormat.printable($0) + "'" }.joined(separator: ", ") + " (Ctrl-C stops)"
    }

    /// A continuation file's name was taken; `path` is the next free one.
    public static func continuationTaken(_ taken: String, using path: String) -> String {
        "\(TextFormat.printable(taken)) exists; continuing into \(TextFormat.printable(path)) instead"
    }

    /// The server is back; `path` is the continuation file, if recording.
    public static func serverBack(continuingInto path: String?) -> String {
        "the server is back; continuing" + (path.map { " into " + TextFormat.printable($0) } ?? "")
    }

    // MARK: demo

    public static func startingDemoServer(_ server: String) -> String {
        "starting a private JACK server '\(server)' (dummy backend, 48 kHz, 256 frames)"
    }

    public static func demoSource(ports: [String]) -> String {
        "demo voice on \(ports.joined(separator: ", ")) (in_1 = primary mic, in_2 = reference mic); Ctrl-C stops"
    }

    public static func demoSourceFailed(_ reason: String) -> String { "the demo source could not start: " + reason }

    // MARK: play

    public static let noPlaybackPorts = "warning: no playback ports found; use -o to choose destinations"
    public static let serverShutDownDuringPlayback = "the JACK server shut down during playback"

    public static func cannotPlay(_ path: String, _ reason: String) -> String {
        "cannot play \(TextFormat.printable(path)): \(reason)"
    }

    // MARK: denoise

    public static func cannotRead(_ path: String, _ reason: String) -> String {
        "cannot read \(TextFormat.printable(path)): \(reason)"
    }

    public static func cannotWrite(_ path: String, _ reason: String) -> String {
        "cannot write \(TextFormat.printable(path)): \(reason)"
    }

    public static func cannotFinish(_ path: String, _ reason: String) -> String {
        "cannot finish \(TextFormat.printable(path)): \(reason)"
    }

    public static func denoiseChannels(_ path: String, has count: Int) -> String {
        "\(TextFormat.printable(path)) has \(count) channel\(count == 1 ? "" : "s"); denoise needs 2 (primary, reference)"
    }

    public static func endedEarly(_ path: String, framesRead: Int64, of total: Int64) -> String {
        "\(TextFormat.printable(path)) ended after \(framesRead) of \(total) frames (damaged file?)"
    }
}
