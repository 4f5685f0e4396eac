import Engine
import Foundation
import Glibc
import Platform

/// A program the tests start with `spawnChild` (stdin from /dev/null, no other descriptor of
/// this process) and reap with `waitpid` on its own pid. Not Foundation's `Process`: once an
/// exit test has run, swift-testing keeps a thread in `waitid(P_ALL, WEXITED | WNOWAIT)`, which
/// spins on any exited child it does not own until someone reaps it, and a `Process` child was
/// once never reaped there: its test hung in `waitUntilExit()` with the monitor thread at 100 %
/// of a core.
final class ChildProcess: @unchecked Sendable {
    struct Ending: Equatable {
        /// The exit status, or the number of the signal that ended it.
        let code: Int32
        let wasKilledBySignal: Bool
    }

    let processIdentifier: pid_t
    private var ending: Ending?

    /// Starts `arguments[0]` (looked up in PATH) with stdin from /dev/null and stdout/stderr to
    /// the given files (or /dev/null), with this process's environment plus `environment`
    /// (a nil value removes a variable). Test threads.
    init(_ arguments: [String], environment: [String: String?] = [:], stdout: String? = nil, stderr: String? = nil)
        throws
    {
        switch spawnChild(arguments, stdout: stdout, stderr: stderr, environment: environment, closingInherited: true) {
        case .success(let pid): processIdentifier = pid
        case .failure(let error): throw error
        }
    }

    /// Reaps the child if it has ended (never blocks). Test threads, one at a time.
    var isRunning: Bool { reap(blocking: false) == nil }

    func signal(_ number: Int32) {
        if ending == nil { kill(processIdentifier, number) }
    }

    /// Waits until it ends; after `timeout` seconds it is killed (SIGKILL) first.
    @discardableResult
    func wait(timeout: Double = 60) -> Ending {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let ending = reap(blocking: false) { return ending }
            usleep(10_000)
        }
        signal(SIGKILL)
        return reap(blocking: true)!
    }

    private func reap(blocking: Bool) -> Ending? {
        if let ending { return ending }
        var status: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(processIdentifier, &status, blocking ? 0 : WNOHANG)
        } while result < 0 && errno == EINTR
        guard result == processIdentifier else { return nil }
        switch ChildEnd(waitStatus: status) {
        case .exited(let code): ending = Ending(code: code, wasKilledBySignal: false)
        case .signaled(let signal): ending = Ending(code: signal, wasKilledBySignal: true)
        }
        return ending
    }
}
