// The control socket of a running recorder: a unix stream socket in $XDG_RUNTIME_DIR/micmon/
// that takes one command line per connection and answers one line, only from the same user
// (SO_PEERCRED); and the client side the control commands use. The server runs on its own
// thread; the client on the main thread.

import CPlatform
import Glibc

/// Why a control socket could not be made or reached, with the system's words.
public struct ControlSocketError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let reason: String
    public let code: Int32

    init(_ operation: String, path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
        reason = String(cString: strerror(code))
    }

    public var description: String { "\(path): \(operation): \(reason)" }
}

public enum ControlSocketPath {
    /// `$XDG_RUNTIME_DIR/micmon`, or nil when the variable is unset or not absolute.
    public static var directory: String? {
        guard let base = Environment.value("XDG_RUNTIME_DIR"), base.hasPrefix("/") else { return nil }
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/micmon"
    }

    /// The socket of the recorder called `name` in `directory`.
    public static func path(name: String, in directory: String) -> String { directory + "/" + name + ".sock" }

    /// The names of the sockets in `directory` (NAME of NAME.sock), sorted; live or not.
    public static func names(in directory: String) -> [String] {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            // SAFETY: d_name is a NUL-terminated array inside the entry readdir returned.
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".sock") && name.count > 5 { names.append(String(name.dropLast(5))) }
        }
        return names.sorted()
    }

    /// Whether a process listens on the socket at `path` (a connection is accepted).
    public static func isLive(_ path: String) -> Bool {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        return micmon_platform_connect_unix(socket, path) == 0
    }
}

/// A recorder's listening socket and the thread that answers it. Each connection sends one line
/// (at most 1 KiB, within 2 s) and gets one line back from `answer`; a peer of another uid is
/// answered `error: ...` and closed without `answer` ever seeing its line. Made and stopped on
/// the main thread; `answer` runs on the socket's thread.
public final class ControlSocketServer: @unchecked Sendable {
    public let path: String
    /// The name the socket is known by (NAME of NAME.sock): what `micmon pause -n NAME` picks.
    public let name: String
    private let listener: Int32
    /// The inode of the socket file bound (a socket's descriptor has another, sockfs's own).
    private let boundInode: UInt64
    /// The wake-up pipe `stop()` writes to: read end, write end.
    private let wake: (read: Int32, write: Int32)
    private let answer: @Sendable (String) -> String
    private var thread: WorkerThread?

    /// Listens at `directory`/`name`.sock (the folder made 0700 when missing). A socket there that
    /// nobody answers (left by a killed micmon) is replaced; a live one is never taken: the next
    /// free name is used (NAME-2, NAME-3, ...). Main thread.
    public init(
        directory: String, name baseName: String, answer: @escaping @Sendable (String) -> String
    ) throws(ControlSocketError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw ControlSocketError("mkdir", path: directory) }
        var status = stat()
        guard lstat(directory, &status) == 0 else { throw ControlSocketError("stat", path: directory) }
        // Someone else's folder (or not a folder) is not used: its owner could read the commands.
        if status.st_mode & S_IFMT != S_IFDIR || status.st_uid != getuid() {
            throw ControlSocketError("not a folder of this user", path: directory, code: EPERM)
        }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ControlSocketError("socket", path: directory) }
        var chosen: (path: String, name: String)?
        var lastError = ControlSocketError("bind", path: directory, code: EADDRINUSE)
        for number in 1 ... 100 {
            let name = number == 1 ? baseName : "\(baseName)-\(number)"
            let path = ControlSocketPath.path(name: name, in: directory)
            // Owner-only from its creation on (then peer credentials are checked on top).
            let previousMask = umask(0o177)
            var bound = micmon_platform_bind_unix(socket, path) == 0
            if !bound && errno == EADDRINUSE && !ControlSocketPath.isLive(path) {
                // Stale: nobody listens. Replaced, unless it is not a socket at all.
                var entry = stat()
                if lstat(path, &entry) == 0 && entry.st_mode & S_IFMT == S_IFSOCK && unlink(path) == 0 {
                    bound = micmon_platform_bind_unix(socket, path) == 0
                }
            }
            let code = errno
            umask(previousMask)
            if bound {
                chosen = (path, name)
                break
            }
            lastError = ControlSocketError("bind", path: path, code: code)
            if code != EADDRINUSE { break }
        }
        guard let chosen else {
            close(socket)
            throw lastError
        }
        guard listen(socket, 8) == 0 else {
            let error = ControlSocketError("listen", path: chosen.path)
            close(socket)
            unlink(chosen.path)
            throw error
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let error = ControlSocketError("pipe", path: chosen.path)
            close(socket)
            unlink(chosen.path)
            throw error
        }
        var entry = stat()
        boundInode = lstat(chosen.path, &entry) == 0 ? UInt64(entry.st_ino) : 0
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        listener = socket
        path = chosen.path
        name = chosen.name
        wake = (ends[0], ends[1])
        self.answer = answer
    }

    deinit {
        stop()
    }

    /// Starts answering on a thread of its own. False when no thread could be made. Main thread.
    @discardableResult
    public func start() -> Bool {
        thread = WorkerThread { [self] in serve() }
        return thread != nil
    }

    /// Stops answering, removes the socket (if it is still this one) and closes it. Safe to
    /// call twice. Main thread.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        thread?.join()
        thread = nil
        // Only our own socket: one that replaced it (ours looked stale) stays.
        var entry = stat()
        if lstat(path, &entry) == 0 && UInt64(entry.st_ino) == boundInode { unlink(path) }
        close(listener)
        close(wake.read)
        close(wake.write)
    }
    private var stopped = false

    private func serve() {
        var descriptors = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || descriptors[1].revents != 0 { return }
            let connection = accept(listener, nil, nil)
            if connection < 0 { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            handle(connection)
            close(connection)
        }
    }

    /// One connection: the peer's uid, one line in, one line out.
    private func handle(_ connection: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        // SAFETY: SO_RCVTIMEO and SO_SNDTIMEO read one timeval, the size passed.
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The line is read (and bounded) before any answer, so a client that sends first always
        // gets its answer, a refusal too, instead of a reset connection.
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while line.count <= 1024 && !line.contains(10) {
            // SAFETY: recv writes at most the buffer's count bytes into it.
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            line += chunk.prefix(count)
        }
        let uid = micmon_platform_peer_uid(connection)
        guard uid == Int64(getuid()) else {
            reply(connection, "error: refused: the recorder runs as uid \(getuid()), this connection is uid \(uid)")
            return
        }
        guard let end = line.firstIndex(of: 10), end <= 1024 else {
            reply(connection, "error: malformed: send one command line (at most 1024 bytes) ending in a newline")
            return
        }
        guard let text = String(validating: line[..<end], as: UTF8.self) else {
            reply(connection, "error: malformed: the command is not UTF-8")
            return
        }
        reply(connection, answer(text))
    }

    private func reply(_ connection: Int32, _ text: String) {
        var bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            // SAFETY: offset < count, so the pointer and the length stay inside `bytes`.
            let sent = bytes.withUnsafeMutableBytes {
                send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return }
            offset += sent
        }
    }
}

/// The client side: one command line to a recorder's socket, its one-line answer back.
public enum ControlSocketClient {
    /// Sends `line` to the socket at `path` and returns the answer (without its newline). Waits
    /// up to 5 s. Main thread.
    public static func send(_ line: String, to path: String) throws(ControlSocketError) -> String {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ControlSocketError("socket", path: path) }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        // SAFETY: SO_RCVTIMEO and SO_SNDTIMEO read one timeval, the size passed.
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard micmon_platform_connect_unix(socket, path) == 0 else { throw ControlSocketError("connect", path: path) }
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            // SAFETY: offset < count, so the pointer and the length stay inside `bytes`.
            let sent = bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            // The recorder may answer and close before a long line is all sent (it refuses
            // one over 1 KiB): its answer is still read.
            if sent < 0 && (errno == EPIPE || errno == ECONNRESET) { break }
            guard sent > 0 else { throw ControlSocketError("send", path: path) }
            offset += sent
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while !answer.contains(10) {
            // SAFETY: recv writes at most the buffer's count bytes into it.
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw ControlSocketError("recv", path: path) }
            if count == 0 { break }
            answer += chunk.prefix(count)
        }
        let end = answer.firstIndex(of: 10) ?? answer.endIndex
        return String(decoding: answer[..<end], as: UTF8.self)
    }
}
