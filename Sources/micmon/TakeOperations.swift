// A recorder's operations around its takes, on the main loop: the disk guard's look (10 Hz),
// the events the --on-event hook is run for (from the session's counters and the take's event
// log), each finalized file handed to the --on-file-closed hook and retention (`fileClosed`),
// and the log of what they did (stderr, and JSON objects with --json). Main thread; the hooks
// and retention themselves run on the operations thread (`OperationsThread`).

import Engine
import Platform
import SoundFile
import Synchronization
import TerminalUI

/// The writer's per-file callback (`CaptureConfiguration.onFileClosed`, set before the session
/// exists) handed on to the handler `TakeOperations.takeStarted` makes once the take's rate is
/// known; a file finalized before that waits for it. Any thread (the file finisher's calls it).
final class FileClosedRelay: Sendable {
    private struct State {
        var handler: (@Sendable (ClosedTakeFile) -> Void)?
        var waiting: [ClosedTakeFile] = []
    }
    private let state = Mutex(State())

    /// Main thread, at each take's start.
    func connect(_ handler: @escaping @Sendable (ClosedTakeFile) -> Void) {
        let waiting = state.withLock { state in
            state.handler = handler
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for file in waiting { handler(file) }
    }

    func callAsFunction(_ file: ClosedTakeFile) {
        let handler = state.withLock { state in
            if state.handler == nil { state.waiting.append(file) }
            return state.handler
        }
        handler?(file)
    }
}

final class TakeOperations {
    let options: OperationsOptions
    /// FILE as given: the pattern retention keeps its manifest for.
    let pattern: String
    let format: AudioFileFormat
    let json: Bool
    private let thread: OperationsThread?
    private let retention: Retention?
    /// The take's timeline events (splits, triggers, marks…) when the session keeps a log; the
    /// hooks follow it from `eventsSeen` on (each take of a `--wait-server` run has its own log,
    /// followed from its start).
    var eventLog: TakeEventLog? { didSet { eventsSeen = 0 } }
    private var eventsSeen = 0
    /// What the session's writer calls for each finalized file (`CaptureConfiguration.onFileClosed`).
    let fileClosedRelay = FileClosedRelay()

    // Per take (reset by `takeStarted`).
    private var guardian: DiskGuard?
    private var sampleRate = 48_000
    private var path = ""
    private var lastDiskLook = -Double.infinity
    private var lastXruns: UInt64 = 0
    private var lastDropped: UInt64 = 0
    private var lastClips: [UInt64] = []
    /// Events of a kind come at most once a second (`eventInterval`): the rest are folded into
    /// the next (the variables carry totals), so a storm of xruns or clips runs a few hooks, not
    /// one per period.
    private var lastFired: [String: Double] = [:]
    private var pending: Set<String> = []
    static let eventInterval = 1.0
    /// The disk guard looks this often (seconds).
    static let diskInterval = 0.1
    /// The latest free space and time left, for the status line.
    private(set) var disk: DiskDisplay?

    init(_ options: OperationsOptions, pattern: String, format: AudioFileFormat, json: Bool) {
        self.options = options
        self.pattern = pattern
        self.format = format
        self.json = json
        if options.hasHooks || options.keepCount != nil || options.keepForSeconds != nil {
            let thread = OperationsThread(timeout: options.hookTimeoutSeconds)
            thread.start()
            self.thread = thread
        } else {
            thread = nil
        }
        let policy = RetentionPolicy(keepCount: options.keepCount, keepForSeconds: options.keepForSeconds)
        retention = policy.isActive ? Retention(pattern: pattern, policy: policy) : nil
    }

    /// Before anything is created: the reason the take cannot start (free space already at or
    /// below `--min-free` on FILE's file system), or nil.
    func preflight() -> String? {
        guard options.minimumFreeBytes > 0 else { return nil }
        let folder = FileSystem.existingFolder(containing: pattern)
        guard case .success(let space) = FileSystem.space(at: folder) else { return nil }
        guard space.availableBytes <= options.minimumFreeBytes else { return nil }
        return "only \(TextFormat.bytes(space.availableBytes)) free on \(TextFormat.printable(folder)), "
            + "not above --min-free \(TextFormat.bytes(options.minimumFreeBytes)); nothing was recorded"
    }

    /// A take began into `path`. Main thread.
    func takeStarted(_ session: CaptureSession, path: String) {
        self.path = path
        sampleRate = session.sampleRate
        lastXruns = session.xruns
        lastDropped = session.framesDropped
        lastClips = session.readings().map(\.clipCount)
        lastDiskLook = -Double.infinity
        let channels = session.recordedChannelNames.count
        guardian = DiskGuard(
            folder: FileSystem.existingFolder(containing: path), minimumFreeBytes: options.minimumFreeBytes,
            rate: TakeByteRate(format: format, sampleRate: sampleRate, channelCount: channels))
        fileClosedHandler = Self.makeFileClosedHandler(
            thread: thread, retention: retention, command: options.onFileClosed, pattern: pattern,
            sampleRate: sampleRate)
        fileClosedRelay.connect(fileClosedHandler)
        event("start", at: session.framesTaken, ["MICMON_FILE": path])
    }

    /// One look, each pass of the main loop: the disk guard (every `diskInterval`), the events
    /// since the last look, and what the operations thread has done. Returns true when the disk
    /// guard ends the take. Main thread.
    func tick(_ session: CaptureSession, output: MeterOutput) -> Bool {
        defer { printReports(output) }
        let frame = session.framesTaken
        let xruns = session.xruns
        if xruns > lastXruns {
            lastXruns = xruns
            pending.insert("xrun")
        }
        let dropped = session.framesDropped
        if dropped > lastDropped {
            lastDropped = dropped
            pending.insert("drop")
        }
        let clips = session.readings().map(\.clipCount)
        if clips.count == lastClips.count, zip(clips, lastClips).contains(where: { $0 > $1 }) {
            pending.insert("clip")
        }
        lastClips = clips
        firePending(session, at: frame)
        if let log = eventLog {
            for logged in log.events(after: eventsSeen) { forward(logged) }
            eventsSeen = log.count
        }
        return lookAtDisk(session, output: output, at: frame)
    }

    private func firePending(_ session: CaptureSession, at frame: UInt64) {
        let now = MonotonicClock.seconds()
        for kind in pending.sorted() where now - (lastFired[kind] ?? -Double.infinity) >= Self.eventInterval {
            pending.remove(kind)
            lastFired[kind] = now
            switch kind {
            case "xrun": event("xrun", at: frame, ["MICMON_XRUNS": String(lastXruns)])
            case "drop": event("drop", at: frame, ["MICMON_DROPS": String(lastDropped)])
            default:
                let names = session.channelNames
                var variables = ["MICMON_CLIPS": lastClips.map(String.init).joined(separator: ",")]
                variables["MICMON_CHANNELS"] = names.joined(separator: ",")
                event("clip", at: frame, variables)
            }
        }
    }

    /// An event of the take's log as an --on-event event (rotation's splits as `rotate`).
    private func forward(_ logged: TakeEvent) {
        let name: String
        switch logged.kind {
        case .split: name = "rotate"
        case .drop, .clip: return  // counted from the session's counters (xrun, drop, clip)
        default: name = logged.kind.rawValue
        }
        var variables: [String: String] = [:]
        if let label = logged.label { variables["MICMON_LABEL"] = label }
        if let channel = logged.channel { variables["MICMON_CHANNEL"] = String(channel + 1) }
        if logged.frameCount > 0 { variables["MICMON_LENGTH_FRAMES"] = String(logged.frameCount) }
        event(name, at: logged.takeFrame, variables)
    }

    private func lookAtDisk(_ session: CaptureSession, output: MeterOutput, at frame: UInt64) -> Bool {
        let now = MonotonicClock.seconds()
        guard let guardian, now - lastDiskLook >= Self.diskInterval else { return false }
        lastDiskLook = now
        let verdict = guardian.check(secondsWritten: Double(frame) / Double(sampleRate))
        disk = guardian.lastReading.map(DiskDisplay.init)
        output.disk = disk
        let folder = TextFormat.printable(guardian.folder)
        switch verdict {
        case .fine: return false
        case .warn:
            let left = disk?.secondsLeft.map(TextFormat.span) ?? "?"
            warn(
                "disk_low",
                "about \(left) of recording left on \(folder) before --min-free "
                    + TextFormat.bytes(options.minimumFreeBytes) + " (\(disk?.text ?? ""))", at: frame, output: output)
            return false
        case .stop:
            warn(
                "disk_stop",
                "free space on \(folder) reached --min-free "
                    + TextFormat.bytes(options.minimumFreeBytes) + " (\(disk?.text ?? "")): ending the take",
                at: frame, output: output)
            return true
        }
    }

    private func warn(_ kind: String, _ message: String, at frame: UInt64, output: MeterOutput) {
        let line = TakeWarningLine(
            warning: kind, message: message, takeSeconds: seconds(frame), takeFrame: frame, disk: disk)
        output.report(text: line.text, json: json ? line.json : nil)
        var variables = ["MICMON_MESSAGE": message]
        if let disk {
            variables["MICMON_FREE_BYTES"] = String(disk.freeBytes)
            if let left = disk.secondsLeft { variables["MICMON_SECONDS_LEFT"] = String(Int(left)) }
        }
        event(kind, at: frame, variables)
    }

    /// A finalized file of the take: its --on-file-closed hook, then retention, queued for the
    /// operations thread, as a function of plain values any thread may call (the writer's
    /// `onFileClosed` callback, once per finalized file of a rotating take): it only queues work.
    /// Made by `takeStarted` for the take's rate.
    private(set) var fileClosedHandler: @Sendable (ClosedTakeFile) -> Void = { _ in }

    static func makeFileClosedHandler(
        thread: OperationsThread?, retention: Retention?, command: String?, pattern: String, sampleRate: Int
    ) -> @Sendable (ClosedTakeFile) -> Void {
        { file in
            guard let thread else { return }
            let end = file.takeRange.upperBound
            let seconds = Double(end) / Double(max(sampleRate, 1))
            let hook = command.map { command in
                let variables = [
                    "MICMON_EVENT": "file_closed", "MICMON_TAKE_FRAME": String(end),
                    "MICMON_TAKE_TIME": TextFormat.fixed(seconds, decimals: 3),
                    "MICMON_SAMPLE_RATE": String(sampleRate),
                    "MICMON_PATTERN": pattern, "MICMON_FILE": file.path, "MICMON_FRAMES": String(file.frameCount),
                    "MICMON_DROPS": String(file.framesDropped), "MICMON_SERVER_GAPS": String(file.serverGaps),
                    "MICMON_SERVER_GAP_FRAMES": String(file.serverGapFrames),
                    "MICMON_TAKE_START_FRAME": String(file.takeRange.lowerBound), "MICMON_TAKE_END_FRAME": String(end),
                    "MICMON_DURATION": TextFormat.fixed(
                        Double(file.frameCount) / Double(max(sampleRate, 1)), decimals: 3),
                    "MICMON_FAILURE": file.failure ?? "",
                ]
                return HookJob(
                    hook: "on-file-closed", event: "file_closed", command: command, takeFrame: end,
                    takeSeconds: seconds, environment: variables)
            }
            thread.submit(.fileClosed(file, hook: hook, retention: retention, takeFrame: end))
        }
    }

    /// The take ended (its files finalized and handed on by the writer): the stop event, and a wait until
    /// every hook and retention pass queued so far has run (each hook bounded by --hook-timeout),
    /// printing what they did, so the summary comes last. Main thread.
    func takeEnded(_ summary: CaptureSummary, reason: StopReason, path: String, output: MeterOutput) {
        pending.removeAll()
        let end = summary.framesTaken
        // Each file of the take reached `fileClosedRelay` from the writer when it was finalized.
        let frames = summary.framesWritten
        event(
            "stop", at: end,
            ["MICMON_REASON": reason.text, "MICMON_FILE": path, "MICMON_FRAMES": String(frames)])
        guardian = nil
        thread?.drain { printReports(output, $0) }
    }

    /// Ends the operations thread (after the last take). Main thread.
    func finish(output: MeterOutput?) {
        thread?.finish()
        if let output { printReports(output) }
    }

    private func seconds(_ frame: UInt64) -> Double { Double(frame) / Double(max(sampleRate, 1)) }

    private func baseVariables(event: String, frame: UInt64) -> [String: String] {
        [
            "MICMON_EVENT": event, "MICMON_TAKE_FRAME": String(frame),
            "MICMON_TAKE_TIME": TextFormat.fixed(seconds(frame), decimals: 3),
            "MICMON_SAMPLE_RATE": String(sampleRate), "MICMON_FILE": path, "MICMON_PATTERN": pattern,
        ]
    }

    /// Queues the --on-event hook for `name` at `frame`, if there is one.
    private func event(_ name: String, at frame: UInt64, _ variables: [String: String] = [:]) {
        guard let thread, let command = options.onEvent else { return }
        var environment = baseVariables(event: name, frame: frame)
        for (key, value) in variables { environment[key] = value }
        thread.submit(
            .hook(
                HookJob(
                    hook: "on-event", event: name, command: command, takeFrame: frame, takeSeconds: seconds(frame),
                    environment: environment)))
    }

    private func printReports(_ output: MeterOutput) {
        guard let thread else { return }
        printReports(output, thread.reports())
    }

    private func printReports(_ output: MeterOutput, _ reports: [OperationsReport]) {
        for report in reports {
            switch report {
            case .hook(let result):
                let line = HookReportLine(result, sampleRate: sampleRate, timeout: options.hookTimeoutSeconds)
                output.report(text: line.text, json: json ? line.json : nil)
            case .retention(let outcome, _, let takeFrame):
                let rule = [
                    options.keepCount.map { "--keep \($0)" },
                    options.keepForSeconds.map { "--keep-for \(TextFormat.span($0))" },
                ].compactMap { $0 }.joined(separator: ", ")
                for removed in outcome.removed {
                    let line = RetentionLine(
                        path: removed, rule: rule, takeSeconds: seconds(takeFrame), takeFrame: takeFrame)
                    output.report(text: line.text, json: json ? line.json : nil)
                }
                var problems = outcome.spared.map { "retention kept \($0.path): \($0.reason)" }
                if let problem = outcome.problem { problems.append("retention: " + problem) }
                for problem in problems {
                    let line = TakeWarningLine(
                        warning: "retention", message: problem, takeSeconds: seconds(takeFrame), takeFrame: takeFrame)
                    output.report(text: line.text, json: json ? line.json : nil)
                }
            }
        }
    }
}
