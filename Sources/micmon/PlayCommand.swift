import DSP
import Engine
import Glibc
import Platform
import TerminalUI

extension Usage {
    static let play = """
    micmon play — play a file through JACK, with output meters

    Usage: micmon play FILE [-o PORT]... [--volume V] [--pan P] [--loops N] [--rate R]
                            [--on-route-loss pause|stop] [--json] [-n NAME] [-s SERVER]

    Play options:
      -o, --output PORT   destination for the next output (out_1, out_2); repeatable,
                          exact names or patterns. Default: the first two physical
                          playback ports.
          --volume V      0 … 1 (default 1)
          --pan P         -1 (left) … 1 (right), default 0. A mono file is panned
                          with the constant-power law (θ = (P+1)·π/4, L = cos θ,
                          R = sin θ: -3.01 dB each at centre); a stereo file is
                          balanced (P < 0 lowers the right side linearly, P > 0 the
                          left; centre leaves both untouched).
          --loops N       0 plays once, N plays N+1 times, -1 loops until stopped.
                          The seam is sample-exact.
          --rate R        0.5 … 2, varispeed with libsamplerate: speed and pitch
                          change together (like tape), no time-stretch artefacts.
          --on-route-loss pause (default) holds the place while the destination
                          ports are gone and resumes when they return; stop ends.

    Any format libsndfile reads. A file whose rate differs from the server's is
    converted with libsamplerate. The file streams from disk (a reader thread
    fills a ring; the realtime callback only copies), so any length plays.
    Ends with exit 0 at the end of the file, or on SIGINT/SIGTERM.

    \(common)
    \(exitCodes)
    """
}

/// `micmon play FILE`.
enum PlayCommand {
    struct Invocation {
        var configuration = PlaybackConfiguration()
        var json = false
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation? {
        var invocation = Invocation()
        var positional: [String] = []
        var index = 0
        func value(_ option: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError("option \(option) needs a value") }
            return arguments[index]
        }
        func number(_ option: String, in range: ClosedRange<Double>) throws(UsageError) -> Double {
            let text = try value(option)
            guard let number = Double(text), number.isFinite else { throw UsageError("\(option) needs a number, not '\(text)'") }
            guard range.contains(number) else {
                throw UsageError("\(option) must be between \(formatted(range.lowerBound)) and \(formatted(range.upperBound)) (got \(text))")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help": return nil
            case "-n", "--name": invocation.configuration.clientName = try value(argument)
            case "-s", "--server": invocation.configuration.serverName = try value(argument)
            case "-o", "--output": invocation.configuration.destinations.append(try value(argument))
            case "--json": invocation.json = true
            case "--volume": invocation.configuration.volume = try number(argument, in: 0 ... 1)
            case "--pan": invocation.configuration.pan = try number(argument, in: -1 ... 1)
            case "--rate": invocation.configuration.rate = try number(argument, in: 0.5 ... 2)
            case "--loops":
                let text = try value(argument)
                guard let loops = Int(text), loops >= -1 else { throw UsageError("--loops needs a whole number ≥ -1, not '\(text)'") }
                invocation.configuration.loops = loops
            case "--on-route-loss":
                let text = try value(argument)
                guard let action = PlaybackConfiguration.RouteLossAction(rawValue: text) else {
                    throw UsageError("--on-route-loss takes pause or stop, not '\(text)'")
                }
                invocation.configuration.onRouteLoss = action
            default:
                if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
                    throw UsageError("unknown option '\(argument)' for micmon play (see micmon play --help)")
                }
                positional.append(argument)
            }
            index += 1
        }
        guard let path = positional.first else { throw UsageError("play needs a FILE (see micmon play --help)") }
        guard positional.count == 1 else { throw UsageError("play takes one FILE, got: \(positional.joined(separator: " "))") }
        var info = stat()
        guard stat(path, &info) == 0 else { throw UsageError("cannot play \(path): \(String(cString: strerror(errno)))") }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw UsageError("\(path) is a directory, not a sound file") }
        invocation.configuration.path = path
        return invocation
    }

    static func formatted(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    static func run(_ arguments: [String]) -> ExitCode {
        let invocation: Invocation
        do {
            guard let parsed = try parse(arguments) else {
                Console.out(Usage.play + "\n")
                return .ok
            }
            invocation = parsed
        } catch {
            Console.error("micmon: \(error.description)")
            return .usage
        }
        let session: PlaybackSession
        do {
            session = try PlaybackSession(invocation.configuration)
        } catch {
            switch error {
            case .jack(.serverUnavailable), .jack(.openFailed):
                Console.error("micmon: \(error.description)")
                Console.error("micmon: start a server first (e.g. `jackd -d alsa`), or try `micmon demo`")
                return .serverUnavailable
            case .jack: Console.error("micmon: \(error.description)"); return .serverUnavailable
            case .file(let fileError): Console.error("micmon: cannot play \(fileError.path): \(fileError.message)"); return .usage
            case .unknownPort, .conversion: Console.error("micmon: \(error.description)"); return .usage
            }
        }
        if session.destinations.isEmpty { Console.error("micmon: warning: no playback ports found; use -o to choose destinations") }
        do {
            try session.start()
        } catch {
            session.stop()
            Console.error("micmon: \(error.description)")
            return .serverUnavailable
        }
        return loop(session, invocation)
    }

    static func loop(_ session: PlaybackSession, _ invocation: Invocation) -> ExitCode {
        let isTerminal = !invocation.json && Console.stdoutIsTerminal
        let terminal = Terminal.detect()
        var linesOnScreen = 0
        var lastPlain = -1.0
        var reason = "end of file"
        var code = ExitCode.ok
        let rate = Double(session.sampleRate)
        let total: Double? = session.plays.map { Double($0) * session.framesPerPass / rate }
        playing: while true {
            StopSignals.sleep(seconds: 0.05)
            if let event = session.checkRoute() {
                switch event {
                case .lost(let ports):
                    Console.error("micmon: \(clock(Double(session.framesPlayed) / rate)) route lost: \(ports.joined(separator: ", ")) went away; " +
                                  (invocation.configuration.onRouteLoss == .pause ? "paused" : "stopping"))
                    if invocation.configuration.onRouteLoss == .stop { reason = "route lost"; break playing }
                case .restored(let ports):
                    Console.error("micmon: \(clock(Double(session.framesPlayed) / rate)) route back: \(ports.joined(separator: ", ")); resumed")
                }
            }
            let position = Double(session.framesPlayed) / rate
            let readings = session.readings()
            let channels = zip(["out_1", "out_2"], readings).map { ChannelDisplay(name: $0, reading: $1, isConnected: !session.isPaused) }
            let status = MeterStatus(elapsedSeconds: position, sampleRate: session.sampleRate, xruns: session.xruns)
            let where_ = "\(session.isPaused ? "PAUSED " : "")\(clock(position)) / \(total.map(clock) ?? "∞")  \(invocation.configuration.path)"
            if invocation.json {
                Console.out(JSONLines.meter(channels: channels, status: status) + "\n")
            } else if isTerminal {
                var lines = MeterRenderer.lines(channels: channels, status: status, width: Terminal.windowColumns() ?? terminal.columns, color: terminal.color)
                lines.append(where_)
                var text = linesOnScreen > 0 ? "\u{1B}[\(linesOnScreen)A" : ""
                for line in lines { text += "\r\u{1B}[2K" + line + "\n" }
                linesOnScreen = lines.count
                Console.out(text)
            } else if position - lastPlain >= 1 {
                lastPlain = position
                Console.out(MeterRenderer.plainLine(channels: channels, status: status) + " | " + where_ + "\n")
            }
            if session.isFinished { break }
            if StopSignals.received != 0 { reason = StopSignals.received == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)"; break }
            if session.serverIsGone { reason = "the JACK server went away"; code = .serverUnavailable; break }
            if let failure = session.readerFailure { reason = failure; code = .fileError; break }
            if Console.outputIsBroken { reason = "output closed"; break }
        }
        let played = session.framesPlayed
        let starved = session.framesStarved
        let xruns = session.xruns
        session.stop()
        let seconds = Double(played) / rate
        if invocation.json {
            Console.out("{\"type\":\"summary\",\"reason\":\"\(reason)\",\"frames_played\":\(played),\"duration_s\":\(String(format: seconds))"
                        + ",\"sample_rate\":\(session.sampleRate),\"frames_starved\":\(starved),\"xruns\":\(xruns)}\n")
        } else {
            Console.out("Playback summary\n  ended:     \(reason)\n  played:    \(played) frames (\(String(format: seconds)) s) at \(session.sampleRate) Hz\n"
                        + "  starved:   \(starved) frames\n  xruns:     \(xruns)\n")
        }
        if code == .serverUnavailable { Console.error("micmon: the JACK server shut down during playback") }
        return code
    }

    static func clock(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded(.down))
        let minutes = tenths / 600
        let rest = tenths % 600
        return (minutes < 10 ? "0" : "") + "\(minutes):" + (rest < 100 ? "0" : "") + "\(rest / 10).\(rest % 10)"
    }
}

private extension String {
    init(format seconds: Double) {
        let millis = Int((seconds * 1000).rounded())
        let fraction = millis % 1000
        self = "\(millis / 1000)." + String(repeating: "0", count: 3 - String(fraction).count) + String(fraction)
    }
}
