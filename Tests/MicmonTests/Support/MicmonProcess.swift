import Foundation

/// A `micmon` run as a child process, as a user would run it (stdin is /dev/null).
final class MicmonProcess: @unchecked Sendable {
    struct Result {
        let exitCode: Int32
        let stdout: String
        let stderr: String
        /// Whether it ended by a signal (e.g. SIGKILL) rather than by exiting.
        let wasKilledBySignal: Bool
    }

    let process: ChildProcess
    private let stdoutPath: String
    private let stderrPath: String

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        let folder = TestEnvironment.scratchFolder("process")
        stdoutPath = folder + "/stdout"
        stderrPath = folder + "/stderr"
        var variables: [String: String?] = ["NO_COLOR": nil]
        for (key, value) in environment { variables[key] = value }
        process = try ChildProcess(
            [TestEnvironment.micmonPath] + arguments, environment: variables,
            stdout: stdoutPath, stderr: stderrPath)
    }

    /// Runs to completion (killed after `timeout` seconds).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> Result {
        let child = try MicmonProcess(arguments, environment: environment)
        return child.wait(timeout: timeout)
    }

    func signal(_ number: Int32) { process.signal(number) }

    /// What it has printed so far (the last line may be partial).
    var stdoutSoFar: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderrSoFar: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// `frames_recorded` and `sample_rate` of its last complete `--json` meter line, if any.
    var recorded: (frames: Int, sampleRate: Int)? {
        let lines = stdoutSoFar.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard let line = lines.last(where: { $0.contains("\"frames_recorded\":") }),
            let frames = line.firstMatch(of: /"frames_recorded":(\d+)/).flatMap({ Int($0.output.1) }),
            let rate = line.firstMatch(of: /"sample_rate":(\d+)/).flatMap({ Int($0.output.1) })
        else { return nil }
        return (frames, rate)
    }

    /// Waits (up to `timeout` seconds) until it reports at least `seconds` recorded at the rate
    /// it reports (`--json` meter lines); false when it ended or the time ran out first.
    func waitUntilRecorded(seconds: Double, timeout: Double = 30) -> Bool {
        func done() -> Bool { recorded.map { Double($0.frames) >= seconds * Double($0.sampleRate) } ?? false }
        return TestEnvironment.waitUntil(timeout: timeout) { !process.isRunning || done() } && done()
    }

    /// The `time` (seconds since the session started) of its last complete `--json` meter line.
    var meterTime: Double? {
        let lines = stdoutSoFar.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard let line = lines.last(where: { $0.contains("\"type\":\"meter\"") }) else { return nil }
        return line.firstMatch(of: /"time":([0-9.]+)/).flatMap { Double($0.output.1) }
    }

    /// Waits (up to `timeout` seconds) until its `--json` meter lines say the session has run
    /// `seconds`; false when it ended or the time ran out first.
    func waitUntilRunning(seconds: Double, timeout: Double = 30) -> Bool {
        func done() -> Bool { (meterTime ?? -1) >= seconds }
        return TestEnvironment.waitUntil(timeout: timeout) { !process.isRunning || done() } && done()
    }

    /// Waits (up to `timeout` seconds) until its stderr contains `text`; false otherwise.
    func waitUntilStderr(contains text: String, timeout: Double = 30) -> Bool {
        TestEnvironment.waitUntil(timeout: timeout) { stderrSoFar.contains(text) }
    }

    func wait(timeout: Double = 60) -> Result {
        let ending = process.wait(timeout: timeout)
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return Result(exitCode: ending.code, stdout: out, stderr: err, wasKilledBySignal: ending.wasKilledBySignal)
    }
}
