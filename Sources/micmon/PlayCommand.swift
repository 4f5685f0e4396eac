import DSP
import Engine
import Platform
import TerminalUI

/// `micmon play FILE`. Main thread.
enum PlayCommand {
    /// Refuses, before anything starts, a FILE that does not exist or is a folder.
    static func checkPlayable(_ path: String) throws(UsageError) {
        guard let status = PathEntry(path: path, followingLinks: true) else {
            throw UsageError(Messages.cannotPlay(path, SystemError.current.description))
        }
        if status.isDirectory { throw UsageError("\(path) is a directory, not a sound file") }
    }

    static func run(_ options: PlayOptions) -> ExitCode {
        do { try checkPlayable(options.path) } catch {
            Console.error("micmon: \(error.description)")
            return .usage
        }
        let session: PlaybackSession
        do {
            session = try PlaybackSession(options.configuration)
        } catch {
            switch error {
            case .jack(.serverUnavailable(let name, _)), .jack(.openFailed(let name, _)):
                Console.error("micmon: \(error.description)")
                Console.error("micmon: " + Messages.startServer(server: name))
                return .serverUnavailable
            case .jack:
                Console.error("micmon: \(error.description)")
                return .serverUnavailable
            case .file(let fileError):
                Console.error("micmon: " + Messages.cannotPlay(fileError.path, fileError.message))
                return .usage
            case .unknownPort, .noDefaultPorts, .conversion:
                Console.error("micmon: \(error.description)")
                return .usage
            }
        }
        if session.destinations.isEmpty { Console.error("micmon: " + Messages.noPlaybackPorts) }
        do {
            try session.start()
        } catch {
            session.stop()
            Console.error("micmon: \(error.description)")
            return .serverUnavailable
        }
        return loop(session, options)
    }

    static func loop(_ session: PlaybackSession, _ options: PlayOptions) -> ExitCode {
        let isTerminal = !options.json && Console.stdoutIsTerminal
        let terminal = Terminal.detect()
        var screen = LiveScreen()
        var lastPlain = -1.0
        var reason = StopReason.endOfFile
        var code = ExitCode.ok
        let rate = Double(session.sampleRate)
        let total: Double? = session.plays.map { Double($0) * session.framesPerPass / rate }
        let watchdog = WallClockWatchdog(probe: session.cycleProbe)
        watchdog.start()
        playing: while true {
            StopSignals.sleep(seconds: 0.05)
            if let event = session.checkRoute() {
                let seconds = Double(session.framesPlayed) / rate
                switch event {
                case .lost(let ports):
                    let pauses = options.onRouteLoss == .pause
                    Console.error("micmon: " + PlaybackReport.routeLost(at: seconds, ports: ports, pauses: pauses))
                    screen.forgetDrawing()
                    if !pauses {
                        reason = .routeLost
                        break playing
                    }
                case .restored(let ports):
                    Console.error("micmon: " + PlaybackReport.routeRestored(at: seconds, ports: ports))
                    screen.forgetDrawing()
                }
            }
            let position = Double(session.framesPlayed) / rate
            let readings = session.readings()
            let channels = zip(["out_1", "out_2"], readings).map {
                ChannelDisplay(name: $0, reading: $1, isConnected: !session.isPaused)
            }
            let status = MeterStatus(elapsedSeconds: position, sampleRate: session.sampleRate, xruns: session.xruns)
            let positionLine = PlaybackReport.positionLine(
                isPaused: session.isPaused, seconds: position, totalSeconds: total,
                path: options.path)
            if options.json {
                Console.out(JSONLines.meter(channels: channels, status: status) + "\n")
            } else if isTerminal {
                let width = Terminal.windowColumns() ?? terminal.columns
                Console.out(
                    screen.redraw(
                        MeterRenderer.lines(
                            channels: channels, status: status, width: width,
                            color: terminal.color) + [positionLine]))
            } else if position - lastPlain >= 1 {
                lastPlain = position
                Console.out(MeterRenderer.plainLine(channels: channels, status: status) + " | " + positionLine + "\n")
            }
            if session.isFinished { break }
            if StopSignals.received != 0 {
                reason = .signal(StopSignals.received)
                break
            }
            if session.serverIsGone {
                reason = .serverGone
                code = .serverUnavailable
                break
            }
            if session.sampleRateChanged {
                reason = .sampleRateChanged
                code = .sampleRateChanged
                break
            }
            if watchdog.stallCount > 0 {
                let event = CycleStallEvent(
                    kind: .cyclesStopped, seconds: Double(session.framesPlayed) / rate,
                    secondsWithoutCycle: watchdog.secondsSinceLastCycle())
                Console.error("micmon: " + event.text(waits: false, ending: "playback"))
                if options.json { Console.out(event.json + "\n") }
                reason = .cyclesStopped
                code = .cyclesStopped
                break
            }
            if let failure = session.readerFailure {
                reason = .readFailed(failure)
                code = .fileError
                break
            }
        }
        var summary = PlaybackReport.Summary(
            reason: reason, framesPlayed: session.framesPlayed, sampleRate: session.sampleRate,
            framesStarved: session.framesStarved, xruns: session.xruns, nonFiniteReplaced: session.nonFiniteReplaced)
        summary.framesMissed = session.framesMissed
        summary.missedGapCount = session.missedGapCount
        summary.missedGaps = session.missedGaps().map {
            SessionSummary.Drop(startFrame: $0.startFrame, length: $0.frameCount)
        }
        summary.lateCycles = session.lateCycles
        summary.framesUncertain = session.framesUncertain
        summary.uncertainGapCount = session.uncertainGapCount
        summary.uncertainGaps = session.uncertainGaps().map {
            SessionSummary.Drop(startFrame: $0.startFrame, length: $0.frameCount)
        }
        summary.timelineJitter = session.timelineJitter
        // Frames that did not reach the outputs on time are micmon's own loss, as a capture's are;
        // frames that may not have are never reported as a whole playback.
        if code == .ok && (summary.framesMissed > 0 || summary.framesUncertain > 0) { code = .framesDropped }
        watchdog.stop()
        session.stop()
        Console.out((options.json ? PlaybackReport.json(summary) : PlaybackReport.text(summary)) + "\n")
        if code == .serverUnavailable { Console.error("micmon: " + Messages.serverShutDownDuringPlayback) }
        if code == .sampleRateChanged {
            Console.error(
                "micmon: "
                    + Messages.playbackSampleRateChanged(from: session.sampleRate, to: session.changedSampleRate))
        }
        if code == .cyclesStopped {
            Console.error("micmon: " + Messages.cyclesStopped(server: session.client.serverName, ended: "playback"))
        }
        return code
    }
}
