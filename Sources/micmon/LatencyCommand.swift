import DSP
import Engine
import Jack
import Platform
import TerminalUI

/// `micmon latency`: callback timing statistics and, with a loop, the measured round trip.
/// Runs for `--duration` (default 5 s) or until SIGINT/SIGTERM/SIGHUP, then prints one summary (text,
/// or one JSON object with `--json`). Main thread.
enum LatencyCommand {
    /// How often the main thread folds in timings and runs the estimator.
    static let pollInterval = 0.01
    static let defaultDuration = 5.0

    static func run(_ options: LatencyOptions) -> ExitCode {
        var configuration = LatencyConfiguration()
        configuration.clientName = options.clientName
        configuration.serverName = options.serverName
        configuration.sendPort = options.sendPort
        configuration.returnPort = options.returnPort
        configuration.softwareLoop = options.softwareLoop
        configuration.durationSeconds = options.durationSeconds ?? defaultDuration

        let session: LatencySession
        do {
            session = try LatencySession(configuration)
        } catch {
            return report(error)
        }
        for warning in session.warnings { Console.error("micmon: " + Messages.warning(warning)) }
        do {
            try session.start()
        } catch {
            _ = session.stop()
            session.close()
            return report(error)
        }

        let live = !options.json && Console.stdoutIsTerminal
        let began = MonotonicClock.nanoseconds()
        var lastLive: UInt64?
        let reason: StopReason
        let watchdog = WallClockWatchdog(probe: session.cycleProbe)
        watchdog.start()
        while true {
            StopSignals.sleep(seconds: pollInterval)
            session.poll()
            if StopSignals.received != 0 {
                reason = .signal(StopSignals.received)
                break
            }
            if session.isComplete {
                reason = .durationReached
                break
            }
            if session.serverIsGone {
                reason = .serverGone
                break
            }
            if watchdog.stallCount > 0 {
                let event = CycleStallEvent(
                    kind: .cyclesStopped, seconds: Double(MonotonicClock.nanoseconds() - began) / 1e9,
                    secondsWithoutCycle: watchdog.secondsSinceLastCycle())
                Console.error("micmon: " + event.text(waits: false, ending: "the measurement"))
                if options.json { Console.out(event.json + "\n") }
                reason = .cyclesStopped
                break
            }
            let now = MonotonicClock.nanoseconds()
            if Double(now - began) / 1e9 > configuration.durationSeconds + 10 {
                reason = .serverStalled
                break
            }
            if live && lastLive.map({ now - $0 >= 200_000_000 }) ?? true {
                lastLive = now
                Console.out(LiveScreen.overwrite(LatencyReport.liveLine(LatencyProgress(session))))
            }
        }
        watchdog.stop()
        let summary = session.stop()
        if live { Console.out(LiveScreen.clearLine) }
        let figures = LatencyFigures(summary)
        if options.json {
            Console.out(LatencyReport.json(figures, reason: reason) + "\n")
        } else {
            Console.out(LatencyReport.text(figures, reason: reason))
        }
        var code = ExitCode.ok
        if summary.serverWasLost {
            Console.error("micmon: " + Messages.serverShutDown(server: session.client.serverName, takeFinalized: false))
            code = .serverUnavailable
        } else if reason == .cyclesStopped || reason == .serverStalled {
            Console.error(
                "micmon: " + Messages.cyclesStopped(server: session.client.serverName, ended: "the measurement"))
            code = .cyclesStopped
        }
        Watchdog.run(within: 10, exitCode: code, what: "closing the JACK client") { session.close() }
        return code
    }

    static func report(_ error: LatencyError) -> ExitCode {
        Console.error("micmon: \(error.description)")
        switch error {
        case .badPort:
            return .usage
        case .jack(.serverUnavailable(let name, _)), .jack(.openFailed(let name, _)):
            Console.error("micmon: " + Messages.startServer(server: name))
            return .serverUnavailable
        case .jack:
            return .serverUnavailable
        }
    }
}
