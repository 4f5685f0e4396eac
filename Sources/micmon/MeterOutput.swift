import DSP
import Engine
import SoundFile
import TerminalUI

/// Shows a running session: redrawn bars on a terminal (20 Hz), plain lines once a second when
/// stdout is not a terminal, or one JSON object per update. Main thread.
final class MeterOutput {
    enum Mode { case terminal, plain, json }

    let mode: Mode
    let fileName: String?
    private let terminal = Terminal.detect()
    private var screen = LiveScreen()
    private var lastPlainLine = -1.0

    init(mode: Mode, fileName: String?) {
        self.mode = mode
        self.fileName = fileName
        if mode == .terminal { Console.out(LiveScreen.hideCursor) }  // while redrawing
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
            let lines = MeterRenderer.lines(
                channels: channels, status: status,
                width: Terminal.windowColumns() ?? terminal.columns, color: terminal.color)
            Console.out(screen.redraw(lines))
        case .plain:
            if status.elapsedSeconds - lastPlainLine >= 1 {
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
        if summary.fileError != nil, let path, let reader = try? SoundFileReader(path: path) {
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

    private func display(_ session: CaptureSession) -> ([ChannelDisplay], MeterStatus) {
        let readings = session.readings()
        let connected = session.inputIsConnected
        var channels = zip(session.channelNames, readings).enumerated().map { index, pair in
            // The clean channel (after the inputs) is connected whenever the primary is.
            ChannelDisplay(
                name: pair.0, reading: pair.1,
                isConnected: index < connected.count ? connected[index] : connected.first ?? true)
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
        if session.denoises, let primary = readings.first, let clean = readings.last {
            statusWithReduction.noiseReductionDB = max(0, primary.rmsDBFS - clean.rmsDBFS)
        }
        return (channels, statusWithReduction)
    }
}
