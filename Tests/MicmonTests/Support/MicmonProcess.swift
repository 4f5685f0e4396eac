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
        process = try ChildProcess([TestEnvironment.micmonPath] + arguments, environment: variables,
                                   stdout: stdoutPath, stderr: stderrPath)
    }

    /// Runs to completion (killed after `timeout` seconds).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> Result {
        let child = try MicmonProcess(arguments, environment: environment)
        return child.wait(timeout: timeout)
    }

    func signal(_ number: Int32) { process.signal(number) }

    func wait(timeout: Double = 60) -> Result {
        let ending = process.wait(timeout: timeout)
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return Result(exitCode: ending.code, stdout: out, stderr: err, wasKilledBySignal: ending.wasKilledBySignal)
    }
}
