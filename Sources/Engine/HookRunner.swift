// The hooks' thread (`--on-file-closed`, `--on-event`) and the file work after a file is
// finalized (retention): jobs queued by any non-realtime thread (the main loop, the writer's
// file-closed callback), run one at a time on this thread, results taken by the main thread.
// Nothing here ever waits for the realtime or the writer thread, and they never wait for it.

import Platform
import Synchronization

/// A command to run through `/bin/sh -c`, for one event of the take.
public struct HookJob: Sendable, Equatable {
    /// The option that asked for it: `on-file-closed` or `on-event`.
    public var hook: String
    /// What happened: `file_closed`, `start`, `stop`, `rotate`, `xrun`, `clip`, `drop`, …
    public var event: String
    public var command: String
    /// Where on the take's timeline it happened, in frames and in seconds.
    public var takeFrame: UInt64
    public var takeSeconds: Double
    /// The variables the command gets on top of micmon's environment (`MICMON_*`).
    public var environment: [String: String]

    public init(
        hook: String, event: String, command: String, takeFrame: UInt64, takeSeconds: Double,
        environment: [String: String]
    ) {
        self.hook = hook
        self.event = event
        self.command = command
        self.takeFrame = takeFrame
        self.takeSeconds = takeSeconds
        self.environment = environment
    }
}

/// How one hook ended.
public struct HookResult: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// It exited with this code (0 is success).
        case exited(Int32)
        /// A signal ended it (not micmon's timeout).
        case signaled(Int32)
        /// It ran past the timeout and micmon killed it (SIGKILL to its process group).
        case timedOut
        /// It could not be started: the system's reason.
        case failedToStart(String)
        /// micmon did not run it: the queue was full, or micmon was ending and gave up.
        case notRun(String)
    }

    public var job: HookJob
    public var outcome: Outcome
    /// Wall-clock seconds it ran.
    public var seconds: Double
    /// The last line it printed (stdout and stderr together), at most 200 characters.
    public var lastLine: String?

    public var succeeded: Bool { outcome == .exited(0) }
}

/// Work for the operations thread.
public enum OperationsWork: Sendable {
    /// Run a hook.
    case hook(HookJob)
    /// A finalized file: its file-closed hook (if any) first, then retention (if any), so the
    /// hook sees the file before retention may delete older ones, and the manifest records the
    /// file as the hook left it.
    case fileClosed(ClosedTakeFile, hook: HookJob?, retention: Retention?, takeFrame: UInt64)
}

/// What the operations thread did, for the main thread to print.
public enum OperationsReport: Sendable {
    case hook(HookResult)
    /// Retention after `file` was finalized (at `takeFrame` of the take).
    case retention(RetentionOutcome, file: String, takeFrame: UInt64)
}

/// Runs hooks and retention on a thread of its own, in the order queued. Any non-realtime
/// thread may `submit` (it never blocks on a running hook); the main thread takes `reports()`
/// and calls `finish()` once at the end.
public final class OperationsThread: Sendable {
    /// A hook still running after this many seconds is killed (`--hook-timeout`).
    public let timeout: Double
    /// Jobs waiting beyond this many are not run (each is reported as `notRun`), so a flood of
    /// events never grows memory or runs hooks long after the fact.
    public let queueLimit: Int

    private struct State {
        var queue: [OperationsWork] = []
        var reports: [OperationsReport] = []
        var isBusy = false
    }
    private let state = Mutex(State())
    private let wake = WakeSignal()
    private let giveUp = Atomic<Bool>(false)
    private let thread = Mutex<WorkerThread?>(nil)

    public init(timeout: Double, queueLimit: Int = 64) {
        self.timeout = timeout
        self.queueLimit = queueLimit
    }

    /// Starts the thread; false when the system has none to give (then nothing runs and every
    /// job is reported as not run). The owning (main) thread.
    @discardableResult
    public func start() -> Bool {
        let worker = WorkerThread { [self] in run() }
        thread.withLock { $0 = worker }
        return worker != nil
    }

    /// Queues work; never waits. Any non-realtime thread.
    public func submit(_ work: OperationsWork) {
        let refused: HookJob? = state.withLock { state in
            // A finalized file is never refused: its retention record matters more than the limit.
            if case .hook(let job) = work, state.queue.count >= queueLimit { return job }
            state.queue.append(work)
            return nil
        }
        if let refused {
            report(.hook(HookResult(job: refused, outcome: .notRun("too many hooks waiting"), seconds: 0)))
        }
        wake.signal()
    }

    /// Everything done since the last call, in order. Main thread.
    public func reports() -> [OperationsReport] {
        state.withLock { state in
            defer { state.reports.removeAll() }
            return state.reports
        }
    }

    /// Whether work is queued or running.
    public var isIdle: Bool { state.withLock { $0.queue.isEmpty && !$0.isBusy } }

    /// Waits until everything queued so far has run (each hook bounded by `timeout`), handing
    /// reports to `each` as they come, on the calling (main) thread.
    public func drain(each: ([OperationsReport]) -> Void) {
        let running = thread.withLock { $0 != nil }
        if !running {
            let left = state.withLock { state in
                defer { state.queue.removeAll() }
                return state.queue
            }
            for case .hook(let job) in left {
                report(.hook(HookResult(job: job, outcome: .notRun("no thread to run hooks on"), seconds: 0)))
            }
        }
        while running && !isIdle {
            _ = waitPolling(timeout: 0.05, interval: 0.005, until: { isIdle })
            let done = reports()
            if !done.isEmpty { each(done) }
        }
        let rest = reports()
        if !rest.isEmpty { each(rest) }
    }

    /// Ends the thread: a hook still running is killed, anything still queued is reported as not
    /// run (`drain` first to let it run). The owning (main) thread, once.
    public func finish() {
        giveUp.store(true, ordering: .relaxed)
        wake.signal()
        let worker = thread.withLock { $0 }
        worker?.join()
        thread.withLock { $0 = nil }
    }

    private func report(_ report: OperationsReport) {
        state.withLock { $0.reports.append(report) }
    }

    private func run() {
        while true {
            let next: OperationsWork? = state.withLock { state in
                guard !state.queue.isEmpty else {
                    state.isBusy = false
                    return nil
                }
                state.isBusy = true
                return state.queue.removeFirst()
            }
            guard let next else {
                if giveUp.load(ordering: .relaxed) { return }
                wake.wait(timeout: .milliseconds(100))
                continue
            }
            switch next {
            case .hook(let job):
                report(.hook(runHook(job)))
            case .fileClosed(let file, let hook, let retention, let takeFrame):
                if let hook { report(.hook(runHook(hook))) }
                if let retention {
                    report(.retention(retention.fileWritten(file.path), file: file.path, takeFrame: takeFrame))
                }
            }
        }
    }

    /// Runs one command through `/bin/sh -c` in a process group of its own, its output into a
    /// scratch file (read for its last line, then removed), none of micmon's descriptors open in
    /// it (the take's locked file must never outlive micmon in a hook). Past `timeout` (or when
    /// micmon gives up) the whole group gets SIGKILL. Operations thread.
    func runHook(_ job: HookJob) -> HookResult {
        if giveUp.load(ordering: .relaxed) {
            return HookResult(job: job, outcome: .notRun("micmon was ending"), seconds: 0)
        }
        let log =
            Environment.temporaryFolder + "/micmon-hook-\(Child.currentProcessID)-\(job.takeFrame)-"
            + "\(MonotonicClock.nanoseconds()).log"
        let began = MonotonicClock.seconds()
        let pid: Int32
        switch spawnChild(
            ["/bin/sh", "-c", job.command], stdout: log, stderr: log, environment: job.environment,
            closingInherited: true)
        {
        case .success(let child): pid = child
        case .failure(let error):
            FileSystem.remove(log)
            return HookResult(job: job, outcome: .failedToStart(error.reason), seconds: 0)
        }
        var outcome: HookResult.Outcome?
        while outcome == nil {
            if let end = Child.poll(pid) {
                switch end {
                case .exited(let code): outcome = .exited(code)
                case .signaled(let signal): outcome = .signaled(signal)
                }
                break
            }
            if MonotonicClock.seconds() - began >= timeout || giveUp.load(ordering: .relaxed) {
                Child.send(SignalNumber.kill, to: -pid)
                Child.send(SignalNumber.kill, to: pid)
                _ = Child.wait(pid)
                outcome = giveUp.load(ordering: .relaxed) ? .notRun("micmon was ending") : .timedOut
                break
            }
            sleep(seconds: 0.01)
        }
        let seconds = MonotonicClock.seconds() - began
        let text = readText(log)
        FileSystem.remove(log)
        let last = text.split(separator: "\n").last.map { String($0.prefix(200)) }
        return HookResult(job: job, outcome: outcome ?? .timedOut, seconds: seconds, lastLine: last)
    }
}
