// A private, headless PipeWire for the tests that run micmon under `pw-jack`: the project's own
// configuration (.ci/pipewire/micmon-test.conf: no D-Bus, no session manager, a dummy driver and
// two null-audio-sink nodes), in a fresh XDG_RUNTIME_DIR of its own, started per test and stopped
// by its pid. It never touches another PipeWire or a JACK server: every client it starts gets
// that runtime folder and none of the variables that would point it elsewhere. Test threads.

import Foundation
import Glibc

/// One private PipeWire daemon and the tools the tests run against it, each as its own process
/// under `pw-jack` (the test process has jackd2's libjack loaded, so it cannot be a client of
/// PipeWire's). Test threads, one test at a time.
final class PrivatePipeWire: @unchecked Sendable {
    /// The virtual capture source's ports (outputs, not flagged physical; its inputs are).
    static let micInputs = ["test microphones:input_FL", "test microphones:input_FR"]
    static let micOutputs = ["test microphones:capture_FL", "test microphones:capture_FR"]
    /// The playback sink's inputs (flagged physical) and its monitor outputs.
    static let speakerInputs = ["test speaker:playback_FL", "test speaker:playback_FR"]
    static let speakerMonitors = ["test speaker:monitor_FL", "test speaker:monitor_FR"]
    /// The configuration's rate and quantum.
    static let sampleRate = 48_000
    static let quantum = 256

    /// The tools these tests need, all from Debian's pipewire, pipewire-bin, pipewire-jack and
    /// jack_capture packages.
    static let tools = ["pipewire", "pw-jack", "pw-metadata", "jack_capture", "jack_lsp"]
    /// The tools missing from PATH.
    static var missingTools: [String] { tools.filter { findExecutable($0) == nil } }
    static var isAvailable: Bool { missingTools.isEmpty }

    /// The project's configuration, found from this file's place in the tree.
    static let configurationPath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0 ..< 4 { url.deleteLastPathComponent() }
        return url.appendingPathComponent(".ci/pipewire/micmon-test.conf").path
    }()

    /// Throws (the test fails) when something is missing; callers gate the test with
    /// `TestEnvironment.runs(needing: PrivatePipeWire.isAvailable)`, so off CI it is skipped.
    static func require() throws {
        let missing = missingTools
        try TestEnvironment.require(
            missing.isEmpty,
            "\(missing.joined(separator: ", ")) not installed "
                + "(Debian: apt-get install pipewire pipewire-bin pipewire-jack jack-capture)")
        try TestEnvironment.require(
            FileManager.default.fileExists(atPath: configurationPath),
            "the project's PipeWire configuration is missing: \(configurationPath)")
    }

    let runtimeFolder: String
    let daemon: ChildProcess
    let logPath: String
    /// Seconds from launch until the capture source's ports were listed by a pw-jack client.
    let secondsUntilReady: Double

    /// Starts `pipewire -c CONF` in a new 0700 runtime folder and waits until a `pw-jack`
    /// client sees the test nodes' ports (up to `timeout` seconds).
    init(timeout: Double = 20) throws {
        try Self.require()
        let base = NSTemporaryDirectory() + "micmon-pw-\(getpid())-\(UUID().uuidString.prefix(8))"
        guard mkdir(base, 0o700) == 0 else {
            throw MissingRequirement(description: "cannot create \(base): \(String(cString: strerror(errno)))")
        }
        runtimeFolder = base
        logPath = base + ".log"
        let started = Date()
        daemon = try ChildProcess(
            ["pipewire", "-c", Self.configurationPath], environment: Self.clientEnvironment(base),
            stdout: logPath, stderr: logPath)
        var ready = false
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && daemon.isRunning {
            let listing = try Self.runTool(["jack_lsp"], runtimeFolder: base, timeout: 10)
            if Self.micOutputs.allSatisfy(listing.stdout.contains)
                && Self.speakerInputs.allSatisfy(listing.stdout.contains)
            {
                ready = true
                break
            }
            usleep(10_000)
        }
        secondsUntilReady = Date().timeIntervalSince(started)
        if !ready {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            stop()
            throw MissingRequirement(
                description: "the private PipeWire did not start within \(Int(timeout)) s: \(log.suffix(600))")
        }
    }

    deinit { stop() }

    /// Stops the daemon (SIGTERM, SIGKILL after 5 s), by its pid only, and removes its folder.
    func stop() {
        if daemon.isRunning {
            daemon.signal(SIGTERM)
            daemon.wait(timeout: 5)
        }
        try? FileManager.default.removeItem(atPath: runtimeFolder)
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// The environment for this daemon's clients: its runtime folder, and nothing that could
    /// point a client at another PipeWire or name a JACK server (PipeWire's libjack reads a
    /// server name as a PipeWire remote).
    static func clientEnvironment(_ runtimeFolder: String) -> [String: String?] {
        [
            "XDG_RUNTIME_DIR": runtimeFolder, "PIPEWIRE_RUNTIME_DIR": nil, "PIPEWIRE_REMOTE": nil,
            "JACK_DEFAULT_SERVER": nil, "PIPEWIRE_QUANTUM": nil, "PIPEWIRE_LATENCY": nil, "NO_COLOR": nil,
        ]
    }

    var environment: [String: String?] { Self.clientEnvironment(runtimeFolder) }

    struct ToolResult {
        let exitCode: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs a JACK tool under `pw-jack` against this daemon and waits for it.
    func run(_ arguments: [String], timeout: Double = 30) throws -> ToolResult {
        try Self.runTool(arguments, runtimeFolder: runtimeFolder, timeout: timeout)
    }

    private static func runTool(_ arguments: [String], runtimeFolder: String, timeout: Double) throws -> ToolResult {
        let child = try Tool(["pw-jack"] + arguments, runtimeFolder: runtimeFolder)
        return child.wait(timeout: timeout)
    }

    /// Starts a program under `pw-jack` against this daemon (micmon, jack_capture), stdout and
    /// stderr to files of its own.
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Tool {
        try Tool(["pw-jack"] + arguments, runtimeFolder: runtimeFolder, environment: environment)
    }

    /// `micmon ARGUMENTS` under `pw-jack`, with `environment` added to the daemon's own.
    func micmon(_ arguments: [String], environment: [String: String] = [:]) throws -> Tool {
        try start([TestEnvironment.micmonPath] + arguments, environment: environment)
    }

    /// Forces the graph's quantum (0 lets it go back to the configured one), live.
    func forceQuantum(_ frames: Int) throws { try setting("clock.force-quantum", frames) }
    /// Forces the graph's rate (0 lets it go back), live.
    func forceRate(_ rate: Int) throws { try setting("clock.force-rate", rate) }

    private func setting(_ key: String, _ value: Int) throws {
        let child = try Tool(["pw-metadata", "-n", "settings", "0", key, String(value)], runtimeFolder: runtimeFolder)
        let result = child.wait(timeout: 10)
        try TestEnvironment.require(result.exitCode == 0, "pw-metadata \(key) \(value) failed: \(result.stderr)")
    }

    /// The port names a `pw-jack jack_lsp` lists, one a line.
    func portNames() throws -> [String] {
        try run(["jack_lsp"]).stdout.split(separator: "\n").map(String.init)
    }

    /// A process started against the private daemon, with its output in files.
    final class Tool: @unchecked Sendable {
        let process: ChildProcess
        let stdoutPath: String
        let stderrPath: String

        init(_ arguments: [String], runtimeFolder: String, environment: [String: String] = [:]) throws {
            let folder = TestEnvironment.scratchFolder("pw-tool")
            stdoutPath = folder + "/stdout"
            stderrPath = folder + "/stderr"
            var variables = PrivatePipeWire.clientEnvironment(runtimeFolder)
            for (key, value) in environment { variables[key] = value }
            process = try ChildProcess(
                arguments, environment: variables, stdout: stdoutPath, stderr: stderrPath)
        }

        var stdoutSoFar: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
        var stderrSoFar: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

        func signal(_ number: Int32) { process.signal(number) }

        /// Waits until its stdout or stderr contains `text` (up to `timeout` s).
        func waitUntilOutput(contains text: String, timeout: Double = 30) -> Bool {
            TestEnvironment.waitUntil(timeout: timeout) {
                stdoutSoFar.contains(text) || stderrSoFar.contains(text) || !process.isRunning
            } && (stdoutSoFar.contains(text) || stderrSoFar.contains(text))
        }

        /// `frames_recorded` of micmon's last complete `--json` meter line.
        var framesRecorded: Int? {
            let lines = stdoutSoFar.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            guard let line = lines.last(where: { $0.contains("\"frames_recorded\":") }) else { return nil }
            return line.firstMatch(of: /"frames_recorded":(\d+)/).flatMap { Int($0.output.1) }
        }

        /// Waits until micmon reports at least `frames` recorded; false if it ended first.
        func waitUntilRecorded(frames: Int, timeout: Double = 30) -> Bool {
            TestEnvironment.waitUntil(timeout: timeout) { !process.isRunning || (framesRecorded ?? 0) >= frames }
                && (framesRecorded ?? 0) >= frames
        }

        func wait(timeout: Double = 60) -> ToolResult {
            let ending = process.wait(timeout: timeout)
            return ToolResult(
                exitCode: ending.wasKilledBySignal ? -ending.code : ending.code, stdout: stdoutSoFar,
                stderr: stderrSoFar)
        }
    }

    static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
