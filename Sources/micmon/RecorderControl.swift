// What drives a running take besides its options: keys, SIGUSR1/SIGUSR2, the control socket's
// answers and the JACK transport follower. Main thread (the socket answers on its own thread).

import Engine
import Jack
import Platform
import TerminalUI

/// What drives a running `record` besides its options, looked at by the main loop on every
/// pass: keys on the terminal (space pause/resume, m mark, r reset, q stop), SIGUSR1 (mark) and
/// SIGUSR2 (pause toggle), the control socket (`micmon mark|pause|resume|stop|status`) and the
/// JACK transport (`--transport`, `--transport-split`). Each posts to the session's
/// `TakeRemote`; the writer applies the requests at their frames. Main thread (the socket
/// answers on its own thread, through the same remote).
final class RecorderControl {
    private let session: CaptureSession
    private let remote: TakeRemote
    private let keys: TerminalKeys?
    private let socket: ControlSocketServer?
    private let transport: TransportFollower?
    /// Events of the take reported so far (the log's first `reported`).
    private var reported = 0
    /// `r` was pressed: the screen's clips and holds start again.
    private(set) var resetRequested = false

    /// Starts what `options` asks for: keys when stdin is a terminal (never read otherwise),
    /// the control socket when $XDG_RUNTIME_DIR is set, the transport follower. A socket that
    /// cannot be made is a warning, not the end of the take. Main thread, after the session is
    /// made and before it starts (a take that follows a stopped transport starts paused).
    init(session: CaptureSession, controls: CaptureControls, path: String?) {
        self.session = session
        remote = session.remote
        do { keys = try TerminalKeys() } catch {
            Console.error("micmon: the terminal refused key mode (\(error.description)); keys are not read")
            keys = nil
        }
        if let directory = ControlSocketPath.directory {
            let answer = ControlAnswer(remote: session.remote, path: path)
            do {
                let server = try ControlSocketServer(directory: directory, name: session.client.name) { line in
                    answer.reply(to: line)
                }
                server.start()
                socket = server
            } catch {
                Console.error(
                    "micmon: no control socket (\(error.description)); micmon mark, pause, ... cannot reach this take")
                socket = nil
            }
        } else {
            socket = nil
        }
        let remote = session.remote
        transport = controls.transport.map {
            TransportFollower(client: session.client, remote: remote, splits: $0 == .split)
        }
    }

    /// The control socket's path, when there is one.
    var socketPath: String? { socket?.path }

    /// Keys, signals, the transport, and the events the writer applied since the last pass
    /// (reported on stderr and, with --json, as lines). Main thread.
    func poll(output: MeterOutput) {
        for signal in StopSignals.takeUserSignals() {
            if signal == StopSignals.markSignal { remote.mark() } else { remote.togglePause() }
        }
        for byte in keys?.read() ?? [] {
            switch byte {
            case UInt8(ascii: " "): remote.togglePause()
            case UInt8(ascii: "m"), UInt8(ascii: "M"): remote.mark()
            case UInt8(ascii: "r"), UInt8(ascii: "R"): output.resetHoldsAndClips(session)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): remote.stop()
            default: break
            }
        }
        transport?.poll()
        let events = session.events.events
        if events.count > reported {
            for event in events[reported...] { output.report(event, sampleRate: session.sampleRate) }
            reported = events.count
        }
        output.isPaused = remote.isPaused
    }

    /// Stops the socket and gives the terminal back. Main thread; safe to call twice.
    func finish() {
        socket?.stop()
        keys?.restore()
    }
}

/// What drives a take besides its configuration (`record --transport`, ...).
struct CaptureControls: Sendable {
    var transport: CaptureOptions.TransportMode?
}

/// The control socket's answers, on the socket's thread.
struct ControlAnswer: Sendable {
    let remote: TakeRemote
    let path: String?

    func reply(to line: String) -> String {
        let words = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard let command = words.first else { return "error: malformed: an empty command" }
        let argument = words.count > 1 ? String(words[1]) : nil
        let seconds = TextFormat.fixed(Double(remote.framesTaken) / Double(max(remote.sampleRate, 1)), decimals: 3)
        switch command {
        case "mark":
            guard remote.isRecording else { return "error: this micmon is not recording" }
            if let argument, argument.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                return "error: malformed: a label may not hold control characters"
            }
            remote.mark(label: argument)
            return "ok marked at \(seconds) s"
        case "pause", "resume", "stop", "status":
            if argument != nil { return "error: malformed: \(command) takes no argument" }
        default:
            return "error: malformed: unknown command '\(TextFormat.printable(String(command.prefix(40))))' "
                + "(mark [LABEL], pause, resume, stop, status)"
        }
        switch command {
        case "pause":
            guard remote.isRecording else { return "error: this micmon is not recording" }
            return remote.pause() ? "ok paused at \(seconds) s" : "ok already paused"
        case "resume":
            guard remote.isRecording else { return "error: this micmon is not recording" }
            return remote.resume() ? "ok resumed at \(seconds) s" : "ok not paused"
        case "stop":
            remote.stop()
            return "ok stopping at \(seconds) s"
        default:
            let state = !remote.isRecording ? "metering" : remote.isPauseAsked ? "paused" : "recording"
            var object = JSONObject(type: "status")
            object.string("state", state)
            object.number("time", Double(remote.framesTaken) / Double(max(remote.sampleRate, 1)), decimals: 3)
            object.integer("frames_taken", remote.framesTaken)
            object.integer("frames_written", remote.framesWritten)
            object.integer("sample_rate", remote.sampleRate)
            object.string("file", path)
            return "ok " + object.text
        }
    }
}

/// `--transport`: the take is written while the JACK transport rolls and paused while it does
/// not; `--transport-split` also starts a new file each time it rolls again. Polled by the main
/// loop; each change is placed on the take's timeline from the transport frames that passed
/// since the last look (the transport frame advances with the cycles while it rolls), so its
/// place is right within a period whatever the poll rate. Main thread.
final class TransportFollower {
    private let client: JackClient
    private let remote: TakeRemote
    private let splits: Bool
    private var wasRolling: Bool
    private var lastFrame: UInt64
    private var lastTakeFrame: UInt64
    /// Frames have been written since the take began (a split before them would make an empty file).
    private var hasRolled = false

    init(client: JackClient, remote: TakeRemote, splits: Bool) {
        self.client = client
        self.remote = remote
        self.splits = splits
        let now = client.transport()
        wasRolling = now.isRolling
        lastFrame = now.frame
        lastTakeFrame = 0
        hasRolled = now.isRolling
        // Not rolling when the take begins: it begins paused, before its first frame.
        if !now.isRolling { remote.pause(at: 0) }
    }

    func poll() {
        let taken = remote.framesTaken
        let now = client.transport()
        defer {
            wasRolling = now.isRolling
            lastFrame = now.frame
            lastTakeFrame = taken
        }
        guard now.isRolling != wasRolling else { return }
        let sinceLastLook = taken >= lastTakeFrame ? taken - lastTakeFrame : 0
        if now.isRolling {
            // It rolled (now.frame - lastFrame) frames since it started: it started that long ago.
            let rolled = now.frame >= lastFrame ? min(now.frame - lastFrame, sinceLastLook) : 0
            let start = taken - rolled
            if splits && hasRolled { remote.split(at: start) }
            remote.resume(at: start)
            hasRolled = true
        } else {
            // It stopped (now.frame - lastFrame) frames after the last look.
            let rolled = now.frame >= lastFrame ? min(now.frame - lastFrame, sinceLastLook) : 0
            remote.pause(at: lastTakeFrame + rolled)
        }
    }
}
