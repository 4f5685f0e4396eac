// Child processes micmon starts and stops itself (a private JACK server, the bench's programs):
// spawn, signal, reap. Main thread (or any non-realtime thread that owns the child).

import Glibc

/// Calls `body` with `posix_spawn` attributes for a process micmon starts and stops itself (a
/// private JACK server; the bench's programs): no signal blocked and SIGINT, SIGTERM, SIGHUP and
/// SIGPIPE at their default actions (micmon blocks or ignores them for itself, and a child
/// inherits both), in a process group of its own (a terminal's Ctrl-C reaches only micmon, which
/// stops its children in order). Main thread.
private func withChildSpawnAttributes<Result>(_ body: (inout posix_spawnattr_t) -> Result) -> Result {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
    return body(&attributes)
}

/// Starts `arguments[0]` (looked up on PATH unless it holds a `/`) with stdin from /dev/null and
/// stdout and stderr into new files (nil: /dev/null; stderr may be the stdout file, then both
/// share it), with the attributes of `withChildSpawnAttributes` and this process's environment,
/// `environment` entries added (a nil value removes one). `closingInherited`: no other descriptor
/// of this process reaches the child. Returns its pid, or the `errno` of the failure. Any
/// non-realtime thread.
public func spawnChild(
    _ arguments: [String], stdout: String? = nil, stderr: String? = nil,
    environment: [String: String?] = [:], closingInherited: Bool = false
) -> Result<pid_t, ChildSpawnError> {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if let stderr, stderr == stdout {
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, stderr ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }
    if closingInherited, let folder = opendir("/proc/self/fd") {
        // glibc ignores a close action on a descriptor another thread closed meanwhile.
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let descriptor = Int32(name), descriptor > 2, descriptor != dirfd(folder) {
                posix_spawn_file_actions_addclose(&actions, descriptor)
            }
        }
        closedir(folder)
    }

    var lines: [String] = []
    var index = 0
    while let entry = environ[index] {
        let line = String(cString: entry)
        let key = line.split(separator: "=", maxSplits: 1).first.map(String.init) ?? line
        if environment.index(forKey: key) == nil { lines.append(line) }
        index += 1
    }
    for (key, value) in environment {
        if let value { lines.append("\(key)=\(value)") }
    }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = lines.map { strdup($0) } + [nil]
    defer {
        for argument in argv { free(argument) }
        for entry in envp { free(entry) }
    }
    var pid: pid_t = 0
    let code = withChildSpawnAttributes { posix_spawnp(&pid, arguments[0], &actions, &$0, argv, envp) }
    return code == 0 ? .success(pid) : .failure(ChildSpawnError(program: arguments[0], code: code))
}

/// How a child ended, from its `waitpid` status: its exit code, or the signal that killed it.
public enum ChildEnd: Equatable, Sendable {
    case exited(Int32)
    case signaled(Int32)

    /// Decodes a wait status: the low 7 bits are the signal that ended the child, or 0 for an
    /// exit, whose code is then the next byte.
    public init(waitStatus status: Int32) {
        let signal = status & 0x7F
        self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    /// "exit N" or "signal N".
    public var text: String {
        switch self {
        case .exited(let code): return "exit \(code)"
        case .signaled(let signal): return "signal \(signal)"
        }
    }
}

/// Why `spawnChild` could not start a program: the `errno` of `posix_spawnp`.
public struct ChildSpawnError: Error, CustomStringConvertible {
    public let program: String
    public let code: Int32
    public init(program: String, code: Int32) {
        self.program = program
        self.code = code
    }
    /// The system's words for `code`.
    public var reason: String { SystemError(code: code).description }
    public var description: String { "\(program) could not be run: " + reason }
}

/// A child process by pid: signal it, see whether it ended, wait for it.
public enum Child {
    /// Sends `signal` to `pid`. Returns false when there is no such process.
    @discardableResult
    public static func send(_ signal: Int32, to pid: pid_t) -> Bool { kill(pid, signal) == 0 }

    /// How the child ended, if it has (reaping it); nil while it runs.
    public static func poll(_ pid: pid_t) -> ChildEnd? {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid ? ChildEnd(waitStatus: status) : nil
    }

    /// Waits until the child ends and reaps it; nil when it is not this process's child.
    public static func wait(_ pid: pid_t) -> ChildEnd? {
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, 0) == pid { return ChildEnd(waitStatus: status) }
            if errno != EINTR { return nil }
        }
    }

    /// The first executable of that name on PATH.
    public static func findExecutable(_ name: String) -> String? {
        let path = Environment.value("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// This process's id.
    public static var currentProcessID: pid_t { getpid() }
}

/// SIGINT, SIGTERM, SIGKILL, SIGSTOP, SIGCONT and SIGHUP by name, for callers that do not import libc.
public enum SignalNumber {
    public static let interrupt = SIGINT
    public static let terminate = SIGTERM
    public static let kill = SIGKILL
    public static let stop = SIGSTOP
    public static let resume = SIGCONT
    public static let hangUp = SIGHUP
}

/// A whole text file (a child's log, a /proc file), or "" when it cannot be read. Any
/// non-realtime thread.
public func readText(_ path: String) -> String {
    guard let file = fopen(path, "r") else { return "" }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0 ..< count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Ending this process.
public enum ProcessExit {
    /// Exits with `code` after the usual clean-up (`exit`).
    public static func exit(_ code: Int32) -> Never { Glibc.exit(code) }

    /// Exits with `code` at once, running no clean-up (`_exit`): for a watchdog whose main thread
    /// is stuck in a library call.
    public static func immediately(_ code: Int32) -> Never { _exit(code) }
}
