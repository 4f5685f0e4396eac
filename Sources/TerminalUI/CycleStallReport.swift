// What micmon says when the graph stops calling it (the wall-clock watchdog) and when it calls
// it again: the stderr line and the JSON event line. Pure; any thread.

/// A stall of the process cycles, or their return, seen `seconds` into the take.
public struct CycleStallEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// No process cycle for the watchdog's limit while the server still answers.
        case cyclesStopped = "cycles_stopped"
        /// Cycles came again after a stall (`--wait-server`).
        case cyclesResumed = "cycles_resumed"
    }

    public var kind: Kind
    /// Seconds into the take (frames taken / rate) when it was seen.
    public var seconds: Double
    /// Seconds without a process cycle: the limit that was passed (stopped), or how long the
    /// stall lasted (resumed).
    public var secondsWithoutCycle: Double

    public init(kind: Kind, seconds: Double, secondsWithoutCycle: Double) {
        self.kind = kind
        self.seconds = seconds
        self.secondsWithoutCycle = secondsWithoutCycle
    }

    var time: String { TextFormat.fixed((max(0, seconds) * 1000).rounded(.down) / 1000, decimals: 3) }

    /// The stderr line, e.g. `[3.968 s] no process cycle for 2.0 s while the server still
    /// answers: the graph stopped calling micmon (a client upstream of it may be dead)`.
    /// `ending`: what ends when micmon does not wait (the take, playback, the measurement).
    public func text(waits: Bool, ending: String = "the take") -> String {
        let length = TextFormat.fixed(secondsWithoutCycle, decimals: 1)
        switch kind {
        case .cyclesStopped:
            return "[\(time) s] no process cycle for \(length) s while the server still answers: the graph "
                + "stopped calling micmon (a client upstream of it may be dead)"
                + (waits ? "; waiting for cycles to resume (Ctrl-C stops)" : "; ending " + ending)
        case .cyclesResumed:
            return "[\(time) s] process cycles resumed after \(length) s without one"
        }
    }

    /// One line: `{"type":"event","schema":1,"time":3.968,"event":"cycles_stopped","seconds_without_cycle":2.0}`.
    public var json: String {
        var object = JSONObject(type: "event")
        object.literal("time", time)
        object.string("event", kind.rawValue)
        object.number("seconds_without_cycle", secondsWithoutCycle, decimals: 1)
        return object.text
    }
}

extension Messages {
    /// The exit message of a take the watchdog ended (or that ended while cycles were stopped).
    public static func cyclesStopped(server: String, stalls: UInt64) -> String {
        "the JACK server '\(TextFormat.printable(server))' stopped calling micmon "
            + (stalls == 1 ? "once" : "\(stalls) times")
            + " while it still answered; the take was finalized with what was delivered"
    }

    /// The exit message of a `play` or `latency` session the watchdog ended: `what` is
    /// "playback" or "the measurement".
    public static func cyclesStopped(server: String, ended what: String) -> String {
        "the JACK server '\(TextFormat.printable(server))' stopped calling micmon while it still answered; "
            + what + " was stopped"
    }

    /// The exit message of a `play` session whose server changed its sample rate.
    public static func playbackSampleRateChanged(from: Int, to: Int) -> String {
        "the server's sample rate changed from \(from) Hz" + (to > 0 ? " to \(to) Hz" : "")
            + "; playback was stopped at the last frame at \(from) Hz (its conversion was made for that rate)"
    }
}
