import Glibc

/// Calls `body` with `posix_spawn` attributes for a process micmon starts and stops itself (a
/// private JACK server; the bench's programs): no signal blocked and SIGINT, SIGTERM, SIGHUP and
/// SIGPIPE at their default actions (micmon blocks or ignores them for itself, and a child
/// inherits both), in a process group of its own (a terminal's Ctrl-C reaches only micmon, which
/// stops its children in order). Main thread.
public func withChildSpawnAttributes<Result>(_ body: (inout posix_spawnattr_t) -> Result) -> Result {
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
