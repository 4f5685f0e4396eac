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
    private let pid: Int32
    private var end: ChildEnd?
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
    public init(
        name: String, sampleRate: Int = 48000, periodFrames: Int = 256,
        captureChannels: Int = 2, playbackChannels: Int = 2, timeout: Double = 20,
        diesWithParent: Bool = false, realtimePriority: Int? = nil, portMaximum: Int? = nil
    ) throws {
        guard let jackd = Child.findExecutable("jackd") else { throw Failure.jackdNotFound }
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
        pid = try PrivateJackServer.spawn(arguments, logPath: logPath)
        // The probe is `jack_lsp`, another process: a client of a second server opened and closed
        // inside a process that has clients of another (a test process, the bench) can crash
        // jack2's libjack 1.9.21, whose globals are shared by every client of the process.
        let lister = Child.findExecutable("jack_lsp")
        let answered = waitPolling(
            timeout: timeout, interval: 0.05,
            until: {
                guard let lister else {
                    guard let probe = try? JackClient(name: "micmon-probe", serverName: name) else { return false }
                    probe.close()
                    return true
                }
                guard
                    case .success(let probe) = spawnChild(
                        [lister, "-s", name], stdout: "/dev/null", stderr: "/dev/null")
                else { return false }
                return Child.wait(probe) == .exited(0)
            }, givingUpIf: { !isRunning })
        if answered { return }
        let text = readText(logPath)
        let state = isRunning ? "did not answer within \(Int(timeout)) s" : "ended (\(end?.text ?? "exit 0"))"
        stop()
        throw Failure.didNotStart(
            name: name, log: state + "; jackd said: " + text.split(separator: "\n").suffix(3).joined(separator: " / "))
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
