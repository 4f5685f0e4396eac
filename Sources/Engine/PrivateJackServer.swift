import Glibc
import Jack

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
    private let pid: pid_t
    private var exitStatus: Int32?
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
    public init(name: String, sampleRate: Int = 48000, periodFrames: Int = 256,
                captureChannels: Int = 2, playbackChannels: Int = 2, timeout: Double = 20,
                diesWithParent: Bool = false, realtimePriority: Int? = nil) throws {
        guard let jackd = PrivateJackServer.findExecutable("jackd") else { throw Failure.jackdNotFound }
        self.name = name
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        let temporary = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        logPath = (temporary.hasSuffix("/") ? temporary : temporary + "/") + "micmon-jackd-\(name).log"
        let priorityArguments = realtimePriority.map { ["-P", String($0)] } ?? []
        let serverArguments = ["-n", name] + priorityArguments + ["-S", "-d", "dummy", "-r", String(sampleRate),
                               "-p", String(periodFrames), "-C", String(captureChannels), "-P", String(playbackChannels)]
        var arguments = [jackd] + serverArguments
        if diesWithParent, let setpriv = PrivateJackServer.findExecutable("setpriv") {
            // setpriv execs jackd, so the process (and its pid) is jackd itself.
            arguments = [setpriv, "--pdeathsig", "TERM"] + arguments
        }
        pid = try PrivateJackServer.spawn(arguments, logPath: logPath)
        let deadline = RealtimeHooks.monotonicNanoseconds() + UInt64(timeout * 1e9)
        while RealtimeHooks.monotonicNanoseconds() < deadline {
            if !isRunning { break }
            if let probe = try? JackClient(name: "micmon-probe", serverName: name) {
                probe.close()
                return
            }
            usleep(50_000)
        }
        let text = readText(logPath)
        let state = isRunning ? "did not answer within \(Int(timeout)) s" : "ended (\(ChildEnd(waitStatus: exitStatus ?? 0).text))"
        stop()
        throw Failure.didNotStart(name: name, log: state + "; jackd said: " + text.split(separator: "\n").suffix(3).joined(separator: " / "))
    }

    /// Whether jackd is still running (reaps it once it has ended). Main thread.
    public var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = status
            return false
        }
        return true
    }

    /// Stops the server (SIGTERM, then SIGKILL after 3 s) and waits for it. Safe to call twice.
    public func stop() {
        if isRunning {
            kill(pid, SIGTERM)
            let deadline = RealtimeHooks.monotonicNanoseconds() + 3_000_000_000
            while isRunning && RealtimeHooks.monotonicNanoseconds() < deadline { usleep(20_000) }
            if isRunning {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                exitStatus = status
            }
        }
        if !keepsLog { unlink(logPath) }
    }

    deinit { stop() }

    /// The first executable of that name on PATH.
    public static func findExecutable(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Starts `arguments[0]` (a path) with stdin from /dev/null and stdout and stderr into a new
    /// `logPath`, with the attributes of `withChildSpawnAttributes` (jackd must still stop on
    /// SIGTERM, which micmon blocks for itself). Returns its pid.
    private static func spawn(_ arguments: [String], logPath: String) throws(Failure) -> pid_t {
        switch spawnChild(arguments, stdout: logPath, stderr: logPath) {
        case .success(let pid): return pid
        case .failure(let error): throw Failure.didNotStart(name: arguments[0], log: "it could not be run: " + error.reason)
        }
    }

}
