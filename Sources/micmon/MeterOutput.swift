import DSP
import Engine
import Platform
import SoundFile
import TerminalUI

/// Shows a running session: redrawn bars on a terminal (20 Hz), plain lines once a second when
/// stdout is not a terminal, or one JSON object per update. Main thread.
///
/// The screen follows the terminal's size: it asks for it (TIOCGWINSZ) on every redraw, so a
/// resized window is drawn at its new size within one update, with no signal handler.
final class MeterOutput {
    enum Mode { case terminal, plain, json }

    let mode: Mode
    let fileName: String?
    /// `--label`: a name per input, in order (nil keeps the port's pretty name or its own).
    let labels: [String?]
    private let terminal: TerminalInfo
    /// `COLUMNS` and `LINES`, read once: the size where the terminal does not say its own.
    private let sizeEnvironment: [String: String]
    private var screen = ScreenDrawing()
    private var clipLatch = ClipLatch()
    private var lastPlainLine = -1.0
    /// The sources' pretty names (JACK metadata), looked up again once a second of the take.
    private var prettyNames: [String?] = []
    private var prettyNamesLookedUpAt = -Double.infinity
    /// Free space and time left on the take's file system (the disk guard's last look), shown on
    /// the status line and in the `meter` object; nil hides them.
    var disk: DiskDisplay?
    /// Take events and finalized files reported so far (`reportTakeFiles`).
    private var eventsReported = 0
    private var filesReported = 0
    /// The take is paused: the screen and the plain lines say so after the file's name.
    var isPaused = false
    /// When the holds were reset (`r`), and each channel's highest peak since: for the hold's
    /// 2 s after it, the hold shown is no higher than that.
    private var holdsResetAt: Double?
    private var peaksSinceReset: [Double] = []
    /// The display descriptor (stdout; stderr when stdout carries the take, `record -`).
    let descriptor: Int32

    init(mode: Mode, fileName: String?, labels: [String?] = [], descriptor: Int32 = 1) {
        self.descriptor = descriptor
        terminal = Terminal.detect(fileDescriptor: descriptor)
        self.mode = mode
        self.fileName = fileName
        self.labels = labels
        var environment: [String: String] = [:]
        for key in ["COLUMNS", "LINES"] {
            if let value = Environment.value(key) { environment[key] = value }
        }
        sizeEnvironment = environment
        if mode == .terminal { Console.out(LiveScreen.hideCursor) }  // while redrawing
    }

    /// The screen counts clips from now on (the JSON and the summary keep the session's
    /// totals). The hook a reset key calls.
    func resetClips(_ session: CaptureSession) {
        clipLatch.resetClips(display(session).0)
    }

    /// The `r` key: the screen's clip counts start again, and so do the peak holds.
    func resetHoldsAndClips(_ session: CaptureSession) {
        resetClips(session)
        holdsResetAt = MonotonicClock.seconds()
        peaksSinceReset = []
    }

    /// Reports a pause, resume or mark the writer applied: on stderr with its place on the
    /// take's timeline, and as a JSON line with --json. Other events are reported elsewhere.
    func report(_ event: TakeEvent, sampleRate: Int) {
        guard event.kind == .pause || event.kind == .resume || event.kind == .mark else { return }
        let seconds = Double(event.takeFrame) / Double(max(sampleRate, 1))
        let what = event.kind == .pause ? "paused" : event.kind == .resume ? "resumed" : "mark"
        var line = "micmon: \(what) at \(TextFormat.fixed(seconds, decimals: 3)) s (take frame \(event.takeFrame))"
        if let label = event.label { line += ": " + label }
        Console.error(line)
        screen.forgetDrawing()
        if mode == .json {
            var object = JSONObject(type: "event")
            object.number("time", seconds, decimals: 3)
            object.string("event", event.kind.rawValue)
            object.integer("frame", event.takeFrame)
            if let label = event.label { object.string("label", label) }
            Console.out(object.text + "\n")
        }
    }

    /// How often the main loop should look at the session: 20 Hz for bars and JSON, 4 Hz for
    /// plain lines (printed once a second), so a recorder in a pipe wakes as little as it can.
    var pollInterval: Double { mode == .plain ? 0.25 : 0.05 }

    func update(_ session: CaptureSession) {
        if mode == .plain {
            let elapsed = Double(session.framesTaken) / Double(session.sampleRate)
            guard elapsed - lastPlainLine >= 1 else { return }
        }
        let (channels, status) = display(session)
        switch mode {
        case .terminal:
            let size = Terminal.screenSize(
                window: Terminal.windowSize(fileDescriptor: descriptor), environment: sizeEnvironment)
            var status = status
            if isPaused { status.fileName = status.fileName.map { $0 + " (paused)" } }
            let lines = MeterScreen.lines(
                channels: clipLatch.shown(channels), status: status, width: size.columns, height: size.rows,
                color: terminal.color)
            Console.out(screen.redraw(lines, columns: size.columns, rows: size.rows))
        case .plain:
            if status.elapsedSeconds - lastPlainLine >= 1 {
                var status = status
                if isPaused { status.fileName = status.fileName.map { $0 + " (paused)" } }
                lastPlainLine = status.elapsedSeconds
                Console.out(MeterRenderer.plainLine(channels: channels, status: status) + "\n")
            }
        case .json:
            Console.out(JSONLines.meter(channels: channels, status: status) + "\n")
        }
    }

    /// Reports a route change: on stderr with its time in the take, and as a JSON line with --json.
    func report(_ change: RouteChange) {
        let event = InputRouteChange(change)
        Console.error("micmon: " + event.text)
        screen.forgetDrawing()  // the bars are redrawn below the message
        if mode == .json { Console.out(event.json + "\n") }
    }

    /// Reports a stall of the process cycles or their return: on stderr at once, and as a JSON
    /// line with --json. `waits`: micmon waits for the cycles (`--wait-server`).
    func report(_ event: CycleStallEvent, waits: Bool) {
        Console.error("micmon: " + event.text(waits: waits))
        screen.forgetDrawing()
        if mode == .json { Console.out(event.json + "\n") }
    }

    /// Reports a line of the recorder's operations (a hook's result, a warning, a file retention
    /// removed): the text on stderr when there is one, the object with --json.
    func report(text: String?, json: String?) {
        if let text {
            Console.error("micmon: " + text)
            screen.forgetDrawing()
        }
        if mode == .json, let json { Console.out(json + "\n") }
    }

    /// Trigger and rotation events, and files finalized, since the last call: on stderr (not
    /// with --json) and as JSON event lines with --json. Main thread.
    func reportTakeFiles(_ session: CaptureSession) {
        guard session.writesSeveralFiles else { return }
        let events = session.events.events(from: eventsReported)
        eventsReported += events.count
        for event in events where [.triggerStart, .triggerStop, .split].contains(event.kind) {
            let line = TakeTimelineEvent(
                kind: event.kind.rawValue, takeFrame: event.takeFrame, sampleRate: session.sampleRate)
            if mode == .json {
                Console.out(line.json + "\n")
            } else {
                Console.error("micmon: " + line.text)
                screen.forgetDrawing()
            }
        }
        let closed = session.closedFiles(after: filesReported)
        filesReported = closed.total
        for file in closed.files {
            let entry = TakeFileEntry(file)
            if mode == .json {
                Console.out(entry.closedJSON(sampleRate: session.sampleRate) + "\n")
            } else {
                Console.error("micmon: " + entry.text)
                screen.forgetDrawing()
            }
        }
    }

    /// Restores the terminal. Main thread.
    func finish(_ session: CaptureSession) {
        if mode == .terminal { Console.out(LiveScreen.showCursor) }
    }

    func printSummary(_ summary: CaptureSummary, reason: StopReason, path: String?, framesMissing: UInt64 = 0) {
        var sessionSummary = SessionSummary(summary, reason: reason, path: path)
        sessionSummary.framesMissing = framesMissing
        // After a write error, the frames taken include what libsndfile refused (a full disk
        // takes part of a block): the summary gives what the finalized file holds, as a reader
        // of it sees it, never more.
        if summary.fileError != nil, !summary.streamed, let path, let reader = try? SoundFileReader(path: path) {
            let held = UInt64(max(0, reader.frameCount))
            if held < sessionSummary.frames {
                sessionSummary.frames = held
                sessionSummary.durationSeconds = Double(held) / Double(summary.sampleRate)
            }
        }
        if mode == .json {
            Console.out(SummaryFormatter.json(sessionSummary) + "\n")
        } else {
            Console.out(SummaryFormatter.text(sessionSummary) + "\n")
        }
    }

    /// Each input's label: its `--label`, else its source's pretty name, else none.
    private func inputLabels(_ session: CaptureSession, elapsedSeconds: Double) -> [String?] {
        if prettyNames.count != session.currentSources.count || elapsedSeconds - prettyNamesLookedUpAt >= 1 {
            prettyNames = session.currentSources.enumerated().map { index, port in
                let labelled = index < labels.count && labels[index] != nil
                return labelled || port.isEmpty ? nil : session.client.prettyName(ofPort: port)
            }
            prettyNamesLookedUpAt = elapsedSeconds
        }
        return prettyNames.indices.map { index in
            (index < labels.count ? labels[index] : nil) ?? prettyNames[index]
        }
    }

    private func display(_ session: CaptureSession) -> ([ChannelDisplay], MeterStatus) {
        let readings = session.readings()
        let connected = session.inputIsConnected
        let inputLabels = inputLabels(session, elapsedSeconds: Double(session.framesTaken) / Double(session.sampleRate))
        var channels = zip(session.channelNames, readings).enumerated().map { index, pair in
            // The clean channel (after the inputs) is connected whenever the primary is.
            var channel = ChannelDisplay(
                name: pair.0, reading: pair.1,
                isConnected: index < connected.count ? connected[index] : connected.first ?? true)
            channel.label = index < inputLabels.count ? inputLabels[index] : nil
            return channel
        }
        if let reset = holdsResetAt {
            if MonotonicClock.seconds() - reset > 2.5 {
                holdsResetAt = nil
            } else {
                if peaksSinceReset.count != channels.count { peaksSinceReset = channels.map(\.peakDBFS) }
                for index in channels.indices {
                    peaksSinceReset[index] = max(peaksSinceReset[index], channels[index].peakDBFS)
                    channels[index].holdDBFS = min(channels[index].holdDBFS, peaksSinceReset[index])
                }
            }
        }
        // Monitoring: the outputs too, after the inputs.
        for (port, reading) in zip(session.monitorPorts, session.monitorReadings()) {
            channels.append(ChannelDisplay(name: port.shortName, reading: reading, isConnected: true))
        }
        let frames = session.framesTaken
        let status = MeterStatus(
            elapsedSeconds: Double(frames) / Double(session.sampleRate), sampleRate: session.sampleRate,
            xruns: session.xruns, framesRecorded: session.isRecording ? frames : 0,
            framesDropped: session.framesDropped, isRecording: session.isRecording, fileName: fileName)
        var statusWithReduction = status
        switch session.triggerState {
        case .armed?: statusWithReduction.triggerState = "armed"
        case .recording?: statusWithReduction.triggerState = "recording"
        case .hanging?: statusWithReduction.triggerState = "hanging"
        case nil: break
        }
        if session.denoises, let primary = readings.first, let clean = readings.last {
            statusWithReduction.noiseReductionDB = max(0, primary.rmsDBFS - clean.rmsDBFS)
        }
        // A plain line shows no loudness: not asking spares the analysis thread its readings.
        if mode != .plain, let loudness = session.loudnessReadings() {
            statusWithReduction.loudness = LoudnessDisplay(
                programmes: loudness.programmes.map { p in
                    LoudnessDisplay.Programme(
                        name: p.name, momentaryLUFS: p.momentaryLUFS, shortTermLUFS: p.shortTermLUFS,
                        integratedLUFS: p.integratedLUFS, loudnessRangeLU: p.loudnessRangeLU,
                        truePeakDBTP: p.truePeakDBTP)
                }, correlation: loudness.correlation)
        }
        if session.meterType != .peak {
            statusWithReduction.ballistics = BallisticsDisplay(
                type: session.meterType, names: session.recordedChannelNames, meters: session.ballisticReadings())
        }
        statusWithReduction.disk = disk
        return (channels, statusWithReduction)
    }
}
