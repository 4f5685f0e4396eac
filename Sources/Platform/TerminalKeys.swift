// Single keys from a terminal on stdin, without echo, and the terminal given back on every way
// out (the C side restores it at exit and on the signals that end or stop the process). Main
// thread.

import CPlatform
import Glibc

/// Keys typed on the terminal micmon's stdin is, read without waiting. Made only when stdin is
/// a terminal: a recorder started by cron or a service never reads its stdin.
public final class TerminalKeys {
    private let descriptor: Int32

    /// Puts the terminal on `descriptor` (default stdin) into key mode; nil when it is not a
    /// terminal. Throws the system's reason when a terminal refuses the mode. Main thread.
    public init?(descriptor: Int32 = 0) throws(SystemError) {
        guard TerminalDevice.isTerminal(descriptor) else { return nil }
        // A process in the background of its terminal would be stopped (SIGTTOU) by a mode
        // change, and cannot read keys anyway: it reads none.
        guard tcgetpgrp(descriptor) == getpgrp() else { return nil }
        if micmon_platform_terminal_enter_key_mode(descriptor) != 0 {
            throw SystemError.current
        }
        self.descriptor = descriptor
    }

    deinit { restore() }

    /// The bytes typed since the last call (none when nothing was). Never waits. Main thread.
    public func read() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        // SAFETY: read writes at most the buffer's count bytes into it.
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? Array(bytes.prefix(count)) : []
    }

    /// Gives the terminal its settings back (again in key mode only after a new `TerminalKeys`).
    /// Main thread; also safe from a watchdog that is about to end the process.
    public func restore() { micmon_platform_terminal_restore() }

    /// Gives the terminal its settings back if one is in key mode. Any thread.
    public static func restoreTerminal() { micmon_platform_terminal_restore() }
}
