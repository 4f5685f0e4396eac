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

    let process = Process()
    private let stdoutPath: String
    private let stderrPath: String

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        let folder = TestEnvironment.scratchFolder("process")
        stdoutPath = folder + "/stdout"
        stderrPath = folder + "/stderr"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: TestEnvironment.micmonPath)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    /// Runs to completion (killed after `timeout` seconds).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> Result {
        let child = try MicmonProcess(arguments, environment: environment)
        return child.wait(timeout: timeout)
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    func wait(timeout: Double = 60) -> Result {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return Result(exitCode: process.terminationStatus, stdout: out, stderr: err,
                      wasKilledBySignal: process.terminationReason == .uncaughtSignal)
    }
}
