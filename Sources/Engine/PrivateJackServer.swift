import Foundation
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
    private let process: Process
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
        logPath = NSTemporaryDirectory() + "micmon-jackd-\(name).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        process = Process()
        let priorityArguments = realtimePriority.map { ["-P", String($0)] } ?? []
        let serverArguments = ["-n", name] + priorityArguments + ["-S", "-d", "dummy", "-r", String(sampleRate),
                               "-p", String(periodFrames), "-C", String(captureChannels), "-P", String(playbackChannels)]
        if diesWithParent, let setpriv = PrivateJackServer.findExecutable("setpriv") {
            // setpriv execs jackd, so the process (and its pid) is jackd itself.
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--pdeathsig", "TERM", jackd] + serverArguments
        } else {
            process.executableURL = URL(fileURLWithPath: jackd)
            process.arguments = serverArguments
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !process.isRunning { break }
            if let probe = try? JackClient(name: "micmon-probe", serverName: name) {
                probe.close()
                return
            }
            usleep(50_000)
        }
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let state = process.isRunning ? "did not answer within \(Int(timeout)) s" : "exited with status \(process.terminationStatus)"
        stop()
        throw Failure.didNotStart(name: name, log: state + "; jackd said: " + text.split(separator: "\n").suffix(3).joined(separator: " / "))
    }

    public var isRunning: Bool { process.isRunning }

    /// Stops the server (SIGTERM, then SIGKILL after 3 s) and waits for it. Safe to call twice.
    public func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(3)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        if !keepsLog { try? FileManager.default.removeItem(atPath: logPath) }
    }

    deinit { stop() }

    /// The first executable of that name on PATH.
    public static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
