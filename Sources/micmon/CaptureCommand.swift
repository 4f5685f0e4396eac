import DSP
import Engine
import Jack
import Platform
import SoundFile
import TerminalUI

/// `micmon meter` and `micmon record`: run a capture session until it is done, showing meters.
enum CaptureCommand {

    static func run(_ invocation: CaptureOptions) -> ExitCode {
        if let path = invocation.filePath, !invocation.streamsToStandardOutput {
            do {
                try OutputPath.checkPattern(path, force: invocation.force, rotation: invocation.rotation)
                if !invocation.rotation.writesSeveralFiles {
                    try OutputPath.checkSidecar(of: path, force: invocation.force)
                }
            } catch {
                Console.error("micmon: \(error.description)")
                return .usage
            }
        }
        var configuration = CaptureConfiguration()
        configuration.clientName = invocation.clientName
        configuration.serverName = invocation.serverName
        configuration.sourcePorts = invocation.ports
        configuration.allowsUnconnected = invocation.allowsUnconnected
        configuration.durationSeconds = invocation.durationSeconds
        if let path = invocation.filePath, let format = invocation.format {
            configuration.recording = .init(
                path: path, format: format, replacesExisting: invocation.force,
                streamDescriptor: invocation.streamsToStandardOutput ? StandardStream.output.rawValue : nil)
            configuration.recording?.metadata = TakeMetadataOptions(
                description: invocation.takeDescription, software: CommandTable.version)
            // A stream has no place beside it for FILE.json.
            configuration.recording?.writesSidecar = !invocation.streamsToStandardOutput
        }
        if invocation.streamsToStandardOutput {
            // stdout carries the take: the display and the summary go to stderr.
            Console.display = .error
        }
        let controls = CaptureControls(transport: invocation.transportMode)
        if invocation.monitors {
            configuration.monitor = .init(
                destinations: invocation.monitorDestinations, gainDecibels: invocation.monitorGainDecibels)
        }
        configuration.denoises = invocation.denoises
        configuration.denoiseLatency = invocation.denoiseLatency
        configuration.recordedChannels = invocation.recordedChannels
        configuration.loudnessMode = invocation.loudnessMode
        configuration.meterType = invocation.meterType
        configuration.keepsAnalysisEnvelope = invocation.writesReport
        configuration.rotation = invocation.rotation
        // record: retention, the disk guard and hooks; a file system already at --min-free
        // refuses the take before anything is created.
        var operations: TakeOperations?
        if invocation.kind == .record, let path = invocation.filePath, let format = invocation.format {
            let made = TakeOperations(invocation.operations, pattern: path, format: format, json: invocation.json)
            if let problem = made.preflight() {
                made.finish(output: nil)
                Console.error("micmon: " + problem)
                return .fileError
            }
            operations = made
        }
        defer { operations?.finish(output: nil) }
        guard invocation.waitsForServer else {
            return run(
                configuration, json: invocation.json, labels: invocation.labels, operations: operations,
                controls: controls)
        }
        return runAcrossServerRestarts(
            configuration, json: invocation.json, force: invocation.force, labels: invocation.labels,
            operations: operations, controls: controls)
    }

    /// `--wait-server`: when the server goes away, the take is finalized, micmon waits for a
    /// server of the same name, and goes on into a continuation file (rec.wav: rec-2.wav, rec-3.wav …).
    /// A lost server is then not an error; SIGINT/SIGTERM/SIGHUP while waiting ends with exit 0.
    /// A rate change ends the take the same way, and the next take starts at once at the new
    /// rate (the server never left, so nothing is waited for).
    static func runAcrossServerRestarts(
        _ first: CaptureConfiguration, json: Bool, force: Bool, labels: [String?] = [],
        operations: TakeOperations? = nil,
        controls: CaptureControls = CaptureControls()
    ) -> ExitCode {
        var configuration = first
        // A name given by one take of the run is never given by a later one (nor replaced).
        configuration.fileNames = TakeFileNames()
        var takeNumber = 1
        while true {
            var code = run(
                configuration, json: json, labels: labels, waitsForCycles: true, operations: operations,
                controls: controls)
            guard code == .serverUnavailable || code == .sampleRateChanged, StopSignals.received == 0 else {
                return code
            }
            // A take that never opened its file (the server refused the client) leaves its name to
            // the next: no number is skipped and no continuation announced that was not written.
            let wroteItsFile =
                configuration.recording.map { PathEntry(path: $0.path, followingLinks: false) != nil } ?? true
            // After a rate change the server never left, but under load PipeWire may refuse a new
            // client while it reconfigures the graph: a few seconds of quiet retries before it
            // counts as gone.
            if code == .sampleRateChanged && !serverTakesAClient(configuration.serverName, within: 5) {
                code = .serverUnavailable
            }
            let server = configuration.serverName ?? JackClient.defaultServerName
            if code == .serverUnavailable { Console.error("micmon: " + Messages.waitingForServer(server)) }
            var reportedMissing: [String] = []
            while code == .serverUnavailable {
                StopSignals.sleep(seconds: 0.5)
                if StopSignals.received != 0 { return .ok }
                // A name of its own, always within JACK's limit (the user's name may be at it).
                guard let probe = try? JackClient(name: "micmon-probe", serverName: configuration.serverName) else {
                    continue
                }
                // The sources may come back later than the server (their clients restart too):
                // the take goes on once every requested source is there again.
                let outputs = probe.portNames(direction: .output)
                probe.close()
                let missing = first.sourcePorts.filter { PortSelection.matches($0, among: outputs).isEmpty }
                // --allow-unconnected: the inputs of missing sources wait for them in the take.
                if missing.isEmpty || first.allowsUnconnected { break }
                if missing != reportedMissing {
                    Console.error("micmon: " + Messages.waitingForSources(missing))
                    reportedMissing = missing
                }
            }
            if wroteItsFile { takeNumber += 1 }
            if let recording = first.recording, first.rotation.writesSeveralFiles {
                // FILE is a pattern: the next files are named by their time (and numbered when
                // a name is taken), as the run's files were.
                Console.error(
                    "micmon: "
                        + (code == .sampleRateChanged
                            ? Messages.continuingAtNewRate(into: recording.path)
                            : Messages.serverBack(continuingInto: recording.path)))
            } else if let recording = first.recording {
                // A name already taken (an earlier run's continuation) is skipped, not overwritten
                // without --force.
                var path = takeNumber == 1 ? recording.path : continuationPath(recording.path, take: takeNumber)
                while !force
                    && (PathEntry(path: path, followingLinks: false) != nil
                        || PathEntry(path: path + ".json", followingLinks: false) != nil)
                {
                    let taken = path
                    takeNumber += 1
                    path = continuationPath(recording.path, take: takeNumber)
                    Console.error("micmon: " + Messages.continuationTaken(taken, using: path))
                }
                do {
                    try OutputPath.check(path, force: force)
                    try OutputPath.checkSidecar(of: path, force: force)
                } catch {
                    Console.error("micmon: \(error.description)")
                    return .usage
                }
                configuration.recording?.path = path
                Console.error(
                    "micmon: "
                        + (code == .sampleRateChanged
                            ? Messages.continuingAtNewRate(into: path) : Messages.serverBack(continuingInto: path)))
            } else {
                Console.error(
                    "micmon: "
                        + (code == .sampleRateChanged
                            ? Messages.continuingAtNewRate(into: nil) : Messages.serverBack(continuingInto: nil)))
            }
        }
    }

    /// Whether the server takes a client within `seconds` (tried every 0.2 s; false at once on a
    /// stop signal). Main thread.
    static func serverTakesAClient(_ serverName: String?, within seconds: Double) -> Bool {
        let deadline = MonotonicClock.seconds() + seconds
        while StopSignals.received == 0 {
            if let probe = try? JackClient(name: "micmon-probe", serverName: serverName) {
                probe.close()
                return true
            }
            if MonotonicClock.seconds() >= deadline { return false }
            StopSignals.sleep(seconds: 0.2)
        }
        return false
    }

    /// take.wav → take-2.wav (the number goes before the extension).
    static func continuationPath(_ path: String, take: Int) -> String {
        let slash = path.lastIndex(of: "/")
        if let dot = path.lastIndex(of: "."), slash.map({ $0 < dot }) ?? true, dot != path.startIndex {
            return String(path[..<dot]) + "-\(take)" + String(path[dot...])
        }
        return path + "-\(take)"
    }

    /// Runs one take. The wall-clock watchdog watches its cycles: when the graph stops calling
    /// micmon, the take ends at once with exit 76, unless `waitsForCycles` (`--wait-server`):
    /// then it waits for the cycles, and a `--duration` take still ends when that much wall-clock
    /// time has passed (holding what was delivered; the summary says how much is missing).
    /// `labels`: `--label`, the screen's name for each input.
    static func run(
        _ configuration: CaptureConfiguration, json: Bool, labels: [String?] = [], waitsForCycles: Bool = false,
        operations: TakeOperations? = nil,
        controls: CaptureControls = CaptureControls()
    ) -> ExitCode {
        var configuration = configuration
        if let operations {
            let relay = operations.fileClosedRelay
            configuration.onFileClosed = { relay($0) }
        }
        let session: CaptureSession
        do {
            session = try CaptureSession(configuration)
        } catch {
            return report(error, server: configuration.serverName)
        }
        operations?.eventLog = session.events
        for warning in session.warnings { Console.error("micmon: " + Messages.warning(warning)) }
        let warningsBeforeStart = session.warnings.count
        // Before the start: a take that follows a stopped transport begins paused.
        let control = RecorderControl(session: session, controls: controls, path: configuration.recording?.path)
        do {
            try session.start()
        } catch {
            control.finish()
            _ = session.stop()
            session.close()
            return report(error, server: configuration.serverName)
        }
        for warning in session.warnings.dropFirst(warningsBeforeStart) {
            Console.error("micmon: " + Messages.warning(warning))
        }

        let display = Console.display
        let mode: MeterOutput.Mode = json ? .json : (display.isTerminal ? .terminal : .plain)
        let output = MeterOutput(
            mode: mode, fileName: configuration.recording?.path, labels: labels, descriptor: display.rawValue)
        if let path = configuration.recording?.path { operations?.takeStarted(session, path: path) }
        let stopReason: StopReason
        let watchdog = WallClockWatchdog(probe: session.cycleProbe)
        watchdog.start()
        let began = MonotonicClock.seconds()
        var stallBegan: Double?
        var stallsReported: UInt64 = 0
        var endedWhileStalled = false
        while true {
            StopSignals.sleep(seconds: output.pollInterval)
            session.drainTimings()
            // By the count, so a stall that ended between two looks is reported too.
            if watchdog.stallCount > stallsReported && stallBegan == nil {
                stallsReported = watchdog.stallCount
                let without =
                    watchdog.isStalled ? watchdog.secondsSinceLastCycle() : WallClockWatchdog.stallSeconds
                stallBegan = MonotonicClock.seconds() - without
                output.report(
                    CycleStallEvent(
                        kind: .cyclesStopped, seconds: Double(session.framesTaken) / Double(session.sampleRate),
                        secondsWithoutCycle: without), waits: waitsForCycles)
            } else if !watchdog.isStalled, let since = stallBegan {
                stallBegan = nil
                output.report(
                    CycleStallEvent(
                        kind: .cyclesResumed, seconds: Double(session.framesTaken) / Double(session.sampleRate),
                        secondsWithoutCycle: MonotonicClock.seconds() - since), waits: waitsForCycles)
            }
            for change in session.pollRoute() { output.report(change) }
            output.reportTakeFiles(session)
            control.poll(output: output)
            output.update(session)
            let diskIsLow = operations?.tick(session, output: output) ?? false
            if StopSignals.received != 0 {
                stopReason = .signal(StopSignals.received)
                break
            }
            if session.remote.isStopAsked {
                stopReason = .stopRequested
                break
            }
            if session.isComplete {
                stopReason = .durationReached
                break
            }
            if session.serverIsGone {
                stopReason = .serverGone
                break
            }
            if session.sampleRateChanged {
                stopReason = .sampleRateChanged
                break
            }
            if session.fileHasFailed {
                stopReason = session.outputWasClosed ? .outputClosed : .fileFailed
                break
            }
            if diskIsLow {
                stopReason = .diskSpaceLow
                break
            }
            if stallBegan != nil && !waitsForCycles {
                stopReason = .cyclesStopped
                endedWhileStalled = true
                break
            }
            if stallBegan != nil, let duration = configuration.durationSeconds,
                MonotonicClock.seconds() - began >= duration
            {
                stopReason = .durationReached
                endedWhileStalled = true
                break
            }
        }
        watchdog.stop()
        let summary = session.stop()
        output.reportTakeFiles(session)
        control.poll(output: output)  // the last pauses and marks the writer applied
        control.finish()
        output.finish(session)
        if let path = configuration.recording?.path {
            operations?.takeEnded(summary, reason: stopReason, path: path, output: output)
        }
        var framesMissing: UInt64 = 0
        if endedWhileStalled, let duration = configuration.durationSeconds {
            let asked = UInt64((duration * Double(session.sampleRate)).rounded())
            framesMissing = asked > summary.framesTaken ? asked - summary.framesTaken : 0
        }
        output.printSummary(
            summary, reason: stopReason, path: configuration.recording?.path, framesMissing: framesMissing)
        var code = exitCode(for: summary, server: session.client.serverName)
        if stopReason == .diskSpaceLow && (code == .ok || code == .framesDropped) {
            Console.error(
                "micmon: the take was ended before its file system filled up (--min-free); the file holds every "
                    + "frame taken")
            code = .fileError
        }
        if endedWhileStalled && (code == .ok || code == .framesDropped) {
            Console.error(
                "micmon: " + Messages.cyclesStopped(server: session.client.serverName, stalls: watchdog.stallCount))
            code = .cyclesStopped
        }
        // `record --report` keeps the envelopes for the picture: each take's report goes beside it.
        if configuration.keepsAnalysisEnvelope, let path = configuration.recording?.path,
            let analysis = summary.analysis,
            let failure = writeReport(analysis, summary: summary, path: path)
        {
            Console.error("micmon: \(failure)")
            if code == .ok { code = .fileError }
        }
        Watchdog.run(within: 10, exitCode: code, what: "closing the JACK client") { session.close() }
        return code
    }

    /// `record --report`: FILE.report.svg and FILE.report.json beside the take, each whole or not
    /// at all; the reason when one could not be written.
    static func writeReport(_ analysis: TakeAnalysisResult, summary: CaptureSummary, path: String) -> String? {
        let rate = Double(max(summary.sampleRate, 1))
        var markers = summary.drops.map {
            TakeMarker(
                kind: .drop, startSeconds: Double($0.startFrame) / rate, lengthSeconds: Double($0.frameCount) / rate)
        }
        markers += summary.serverGaps.map {
            TakeMarker(
                kind: .serverGap, startSeconds: Double($0.startFrame) / rate,
                lengthSeconds: Double($0.frameCount) / rate)
        }
        // The take's own sidecar lists those drops and gaps already, with its other markers.
        if PathEntry(path: ReportCommand.sidecarPath(for: path), followingLinks: false) != nil {
            markers = ReportCommand.sidecarMarkers(for: path, sampleRate: summary.sampleRate)
        }
        if let failure = ReportCommand.writePicture(analysis, of: path, markers: markers, to: path + ".report.svg") {
            return failure
        }
        do {
            try FileSystem.writeWhole(AnalysisFormat.reportJSON(analysis, path: path) + "\n", to: path + ".report.json")
        } catch {
            return "\(path).report.json: cannot write the report: \(error.description)"
        }
        return nil
    }

    /// The documented exit code for how the session ended; prints the reason for a failure.
    static func exitCode(for summary: CaptureSummary, server: String) -> ExitCode {
        if let error = summary.fileError, error.isClosedPipe, summary.streamed {
            Console.error("micmon: " + Messages.outputClosed(frames: summary.framesWritten))
            return .outputClosed
        }
        if let error = summary.fileError {
            Console.error("micmon: \(error.description)")
            return .fileError
        }
        if summary.serverWasLost {
            Console.error("micmon: " + Messages.serverShutDown(server: server, takeFinalized: true))
            return .serverUnavailable
        }
        if summary.sampleRateChanged {
            Console.error(
                "micmon: " + Messages.sampleRateChanged(from: summary.sampleRate, to: summary.changedSampleRate))
            return .sampleRateChanged
        }
        if summary.serverGapCount > 0 {
            Console.error(
                "micmon: " + Messages.serverGaps(frames: summary.framesSkippedByServer, gaps: summary.serverGapCount))
        }
        if summary.framesMissed > 0 {
            Console.error("micmon: " + Messages.framesMissed(summary.framesMissed, gaps: summary.missedGapCount))
        }
        if summary.framesUncertain > 0 {
            Console.error(
                "micmon: " + Messages.silenceUncertain(summary.framesUncertain, runs: summary.uncertainGapCount))
        }
        for (input, source) in summary.neverConnected {
            Console.error("micmon: " + Messages.neverConnected(input: input, source: source))
        }
        if summary.framesDropped > 0 || summary.framesMissed > 0 || summary.framesUncertain > 0 {
            if summary.framesDropped > 0 { Console.error("micmon: " + Messages.framesDropped(summary.framesDropped)) }
            return .framesDropped
        }
        if !summary.neverConnected.isEmpty { return .sourceNeverConnected }
        return .ok
    }

    /// Prints why a session could not start and picks the exit code.
    static func report(_ error: CaptureError, server: String?) -> ExitCode {
        switch error {
        case .jack(.serverUnavailable(let name, _)), .jack(.openFailed(let name, _)):
            Console.error("micmon: \(error.description)")
            Console.error("micmon: " + Messages.startServer(server: name))
            return .serverUnavailable
        case .jack:
            Console.error("micmon: \(error.description)")
            return .serverUnavailable
        case .unknownPort, .noDefaultPorts, .denoise, .loudness, .buffersTooLarge, .noRoomForPorts, .setting:
            Console.error("micmon: \(error.description)")
            return .usage
        case .file(let file) where file.isAlreadyThere || file.isInUse:
            Console.error("micmon: " + OutputPath.creationRefusal(file))
            return .usage
        case .file(let file) where file.isFormatRefusal:
            Console.error("micmon: \(file.description); nothing was written")
            return .usage
        case .file:
            Console.error("micmon: \(error.description)")
            return .fileError
        }
    }
}

extension StopReason {
    /// The reason for a stop signal taken by `StopSignals`.
    static func signal(_ number: Int32) -> StopReason {
        switch number {
        case SignalNumber.interrupt: return .interrupted
        case SignalNumber.hangUp: return .hungUp
        default: return .terminated
        }
    }
}
