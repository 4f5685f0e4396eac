// A private jackd on the dummy backend (`micmon demo`, the tests): started, probed and stopped
// through Platform's child processes. Main thread.

import Jack
import Platform

/// A JACK server on the dummy backend under a private name, started and stopped by micmon
/// (`micmon demo`, tests). It never touches the user's own server. Main thread.
public final class PrivateJackServer: @unchecked Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case jackdNotFound
        case didNotStart(name: String, log: String)
        public var description: String {
            switch self {
            case .jackdNotFound:
                return "jackd is not installed (Debian: apt-get install jackd2)"
            case .didNotStart(let name, let log):
                return "the private JACK server '\(name)' did not start" + (log.isEmpty ? "" : ": \(log)")
            }
        }
    }

    public let name: String
    public let sampleRate: Int
    public let periodFrames: Int
    /// jackd's pid (setpriv execs it, so it is jackd's own), and its wait status once reaped.
    private var pid: Int32 = 0
    private var end: ChildEnd?
    /// Why the first jackd did not answer, when a second one had to be started; nil otherwise.
    public private(set) var firstStartFailure: String?
    /// How the probe crashed while jackd listened on its socket (taken as started); nil otherwise.
    public private(set) var probeCrash: String?
    /// jackd's standard output and error (removed by `stop()` unless `keepsLog`).
    public let logPath: String
    /// Leave the log in place on `stop()` (for a soak's diagnosis).
    public var keepsLog = false

    /// Starts `jackd -n NAME -S -d dummy` and waits until a client can connect (up to `timeout` s).
    /// With `diesWithParent`, jackd gets SIGTERM when the thread that started it ends (through
    /// `setpriv --pdeathsig`, when util-linux has it), so even a crashed micmon leaves no server
    /// behind. Only for a thread that lives as long as the server: the main thread.
    /// `realtimePriority` is jackd's `-P` (SCHED_FIFO priority of its threads; jackd's default
    /// is 10; libjack runs clients' process threads 5 below it), nil for the default.
    /// `jackdPath` is the jackd to run and `probePath` the jack_lsp to probe it with (the first on
    /// PATH when nil).
    public init(
        name: String, sampleRate: Int = 48000, periodFrames: Int = 256,
        captureChannels: Int = 2, playbackChannels: Int = 2, timeout: Double = 20,
        diesWithParent: Bool = false, realtimePriority: Int? = nil, portMaximum: Int? = nil,
        jackdPath: String? = nil, probePath: String? = nil
    ) throws {
        guard let jackd = jackdPath ?? Child.findExecutable("jackd") else { throw Failure.jackdNotFound }
        self.name = name
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        logPath = Environment.temporaryFolder + "micmon-jackd-\(name).log"
        let priorityArguments = realtimePriority.map { ["-P", String($0)] } ?? []
        // jackd's own `-p` (before `-d`): the size of the server's port table.
        let portArguments = portMaximum.map { ["-p", String($0)] } ?? []
        let serverArguments =
            ["-n", name] + priorityArguments + portArguments + [
                "-S", "-d", "dummy", "-r", String(sampleRate),
                "-p", String(periodFrames), "-C", String(captureChannels), "-P", String(playbackChannels),
            ]
        var arguments = [jackd] + serverArguments
        if diesWithParent, let setpriv = Child.findExecutable("setpriv") {
            // setpriv execs jackd, so the process (and its pid) is jackd itself.
            arguments = [setpriv, "--pdeathsig", "TERM"] + arguments
        }
        // A jackd that runs but never answers within `timeout` is stopped and started once more
        // (what the first one said is kept in `firstStartFailure`); one that ends is not retried.
        var attempt = 1
        while true {
            pid = try PrivateJackServer.spawn(arguments, logPath: logPath)
            end = nil
            guard let unanswered = awaitAnswer(timeout: timeout, probePath: probePath) else { return }
            let log = readText(logPath).split(separator: "\n").suffix(4).joined(separator: " / ")
            let wasRunning = isRunning
            stop()
            let failure = Failure.didNotStart(
                name: name,
                log: (wasRunning ? "did not answer within \(Int(timeout)) s" : "ended (\(end?.text ?? "exit 0"))")
                    + "; jackd said: " + log + "; last probe: " + unanswered)
            guard wasRunning, attempt < 2 else { throw failure }
            firstStartFailure = failure.description
            attempt += 1
        }
    }

    /// Waits until a client can connect, polling every 50 ms for up to `timeout` s. Nil once one
    /// does; else what the last probe came to (jackd ended, or it never answered).
    /// The probe is `jack_lsp`, another process: a client of a second server opened and closed
    /// inside a process that has clients of another (a test process, the bench) can crash jack2's
    /// libjack 1.9.21, whose globals are shared by every client of the process.
    private func awaitAnswer(timeout: Double, probePath: String?) -> String? {
        let lister = probePath ?? Child.findExecutable("jack_lsp")
        let probeLog = logPath + ".probe"
        // jackd2's request socket for this server (its server folder is /dev/shm).
        let requestSocket = "/dev/shm/jack_\(name)_\(Environment.userID)_0"
        defer { FileSystem.remove(probeLog) }
        var lastProbe = "no probe ran"
        let answered = waitPolling(
            timeout: timeout, interval: 0.05,
            until: {
                guard let lister else {
                    guard let probe = try? JackClient(name: "micmon-probe", serverName: name) else {
                        lastProbe = "a client could not open"
                        return false
                    }
                    probe.close()
                    return true
                }
                switch spawnChild([lister, "-s", name], stdout: "/dev/null", stderr: probeLog) {
                case .failure(let error):
                    lastProbe = "jack_lsp could not be run: " + error.reason
                    return false
                case .success(let probe):
                    // Bounded: a probe that hangs on a server half started is killed.
                    var probeEnd: ChildEnd?
                    let ended = waitPolling(
                        timeout: 5, interval: 0.01,
                        until: {
                            probeEnd = Child.poll(probe)
                            return probeEnd != nil
                        })
                    if !ended {
                        Child.send(SignalNumber.kill, to: probe)
                        _ = Child.wait(probe)
                        lastProbe = "jack_lsp did not end within 5 s"
                        return false
                    }
                    if probeEnd == .exited(0) { return true }
                    if case .signaled = probeEnd, ControlSocketPath.isLive(requestSocket) {
                        // jack_lsp itself crashed (libjack 1.9.21's client aborts now and then in
                        // malloc, for minutes at a time) while jackd listens: the server is up.
                        let said = readText(probeLog).split(separator: "\n").suffix(1).joined()
                        probeCrash = "jack_lsp " + (probeEnd?.text ?? "?") + " (" + said + ")"
                        return true
                    }
                    let said = readText(probeLog).split(separator: "\n").suffix(2).joined(separator: " / ")
                    lastProbe = "jack_lsp " + (probeEnd?.text ?? "?") + ": " + said
                    return false
                }
            }, givingUpIf: { !isRunning })
        return answered ? nil : lastProbe
    }

    /// Whether jackd is still running (reaps it once it has ended). Main thread.
    public var isRunning: Bool {
        if end != nil { return false }
        end = Child.poll(pid)
        return end == nil
    }

    /// Stops the server (SIGTERM, then SIGKILL after 3 s) and waits for it. Safe to call twice.
    public func stop() {
        if isRunning {
            Child.send(SignalNumber.terminate, to: pid)
            if !waitPolling(timeout: 3, interval: 0.02, until: { !isRunning }) {
                Child.send(SignalNumber.kill, to: pid)
                end = Child.wait(pid)
            }
        }
        if !keepsLog { FileSystem.remove(logPath) }
    }

    deinit { stop() }

    /// Starts `arguments[0]` (a path) with stdin from /dev/null and stdout and stderr into a new
    /// `logPath`, with the attributes of `withChildSpawnAttributes` (jackd must still stop on
    /// SIGTERM, which micmon blocks for itself). Returns its pid.
    private static func spawn(_ arguments: [String], logPath: String) throws(Failure) -> Int32 {
        switch spawnChild(arguments, stdout: logPath, stderr: logPath) {
        case .success(let pid): return pid
        case .failure(let error):
            throw Failure.didNotStart(name: arguments[0], log: "it could not be run: " + error.reason)
        }
    }

}
