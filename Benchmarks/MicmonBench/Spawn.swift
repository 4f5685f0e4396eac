import Engine
import Glibc
import Platform
import Synchronization

// Child processes: started with posix_spawn, reaped with wait4 for their rusage, and stopped on
// every exit path of the bench (see `Cleanup`).

/// What wait4 reports about a finished child (all its threads; it has no children of its own).
struct ChildUsage: Codable {
    var userSeconds: Double
    var systemSeconds: Double
    /// user + system.
    var cpuSeconds: Double
    var voluntarySwitches: Int
    var involuntarySwitches: Int
    /// Peak resident set size in MB: the child's `VmHWM`, read from /proc while it runs (every
    /// poll, 50 ms apart). Not wait4's `ru_maxrss`: posix_spawn shares the bench's memory until
    /// exec, and Linux carries that memory's high-water mark into the child's, so every child
    /// reported the bench's own peak (132–160 MB, rising run after run) whatever it used.
    var peakRSSMegabytes: Double
    var wallSeconds: Double
    /// The most private memory seen while it ran, in MB: `Private_Clean` + `Private_Dirty` of
    /// /proc/PID/smaps_rollup (read at most twice a second), so libjack's shared segment (the
    /// port buffers every client maps) is left out: the process's own heap, stacks and code.
    var peakPrivateMegabytes: Double? = nil
    /// Each thread's CPU time as last read from /proc/PID/task/TID/schedstat (every poll, 50 ms
    /// apart, so up to the last 50 ms of a thread is missing), in thread-id order.
    var threads: [ThreadUsage]? = nil
}

/// One thread of a child: its name (`comm`), scheduling policy and CPU time.
struct ThreadUsage: Codable {
    var name: String
    /// SCHED_FIFO or SCHED_RR: a realtime thread (JACK's process thread).
    var isRealtime: Bool
    var cpuSeconds: Double

    /// The thread's role: "realtime" for a FIFO/RR thread, otherwise its name.
    var role: String { isRealtime ? "realtime" : name }
}

/// How a child ended.
struct SpawnError: Error, CustomStringConvertible {
    let description: String
}

/// A started child process. Main thread.
final class Child {
    let pid: pid_t
    let commandLine: String
    private let startedNanoseconds: UInt64
    private let isServer: Bool
    private(set) var end: (ChildEnd, ChildUsage)?
    /// The highest `VmHWM` (KiB) seen while the child ran.
    private var peakResidentKilobytes = 0
    /// The highest private memory (KiB) seen while the child ran, and when it was last read.
    private var peakPrivateKilobytes = 0
    private var lastPrivateReading: UInt64 = 0
    /// Per thread id: name, realtime or not, CPU nanoseconds, as last read.
    private var threadTimes: [Int32: (name: String, isRealtime: Bool, nanoseconds: UInt64)] = [:]

    /// Starts `arguments[0]` (looked up on PATH) with stdin from /dev/null and stdout/stderr to
    /// the given files (or /dev/null), in a process group of its own (a terminal's Ctrl-C reaches
    /// only the bench, which stops the children itself), with default signal dispositions and
    /// an empty signal mask. `environment` entries are added to the bench's own.
    init(
        _ arguments: [String], stdout: String? = nil, stderr: String? = nil,
        environment: [String: String] = [:], isServer: Bool = false
    ) throws(SpawnError) {
        commandLine = arguments.joined(separator: " ")
        self.isServer = isServer

        switch spawnChild(arguments, stdout: stdout, stderr: stderr, environment: environment.mapValues { $0 }) {
        case .success(let pid): self.pid = pid
        case .failure(let error): throw SpawnError(description: "\(arguments[0]) did not start: \(error.reason)")
        }
        startedNanoseconds = MonotonicClock.nanoseconds()
        Cleanup.track(pid, isServer: isServer)
    }

    /// Reaps the child if it has ended, without blocking.
    @discardableResult
    func poll() -> (ChildEnd, ChildUsage)? {
        if end == nil {
            notePeakResidentSize()
            noteThreads()
            reap(options: WNOHANG)
        }
        return end
    }

    /// Reads the child's high-water resident size from /proc (nothing once it has exited).
    private func notePeakResidentSize() {
        for line in readText("/proc/\(pid)/status").split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes =
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
            peakResidentKilobytes = max(peakResidentKilobytes, kilobytes)
        }
        let now = MonotonicClock.nanoseconds()
        guard now &- lastPrivateReading >= 500_000_000 else { return }
        lastPrivateReading = now
        var privateKilobytes = 0
        for line in readText("/proc/\(pid)/smaps_rollup").split(separator: "\n")
        where line.hasPrefix("Private_Clean:") || line.hasPrefix("Private_Dirty:") {
            privateKilobytes +=
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
        }
        peakPrivateKilobytes = max(peakPrivateKilobytes, privateKilobytes)
    }

    /// Reads each thread's CPU time (schedstat's first field, ns on a processor), name and
    /// policy (stat's 41st field) from /proc while the child runs.
    private func noteThreads() {
        guard let directory = opendir("/proc/\(pid)/task") else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let tid = Int32(name) else { continue }
            let base = "/proc/\(pid)/task/\(tid)"
            guard
                let nanoseconds = readText(base + "/schedstat").split(separator: " ").first.flatMap({ UInt64($0) })
            else { continue }
            var known = threadTimes[tid]
            if known == nil || known?.isRealtime == false {
                let stat = readText(base + "/stat")
                let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
                // After the ")" that ends comm, field 3 (state) comes first: field 41 is index 38.
                let policy = fields.count > 38 ? Int(fields[38]) ?? 0 : 0
                let comm = readText(base + "/comm").split(separator: "\n").first.map(String.init) ?? "?"
                known = (comm, policy == 1 || policy == 2, nanoseconds)
            }
            known?.nanoseconds = nanoseconds
            threadTimes[tid] = known
        }
    }

    /// Waits up to `timeout` seconds for the child to end (polling every 50 ms).
    @discardableResult
    func wait(timeout: Double) -> (ChildEnd, ChildUsage)? {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        while poll() == nil && MonotonicClock.nanoseconds() < deadline { sleep(seconds: 0.05) }
        return end
    }

    func signal(_ number: Int32) {
        if end == nil { kill(pid, number) }
    }

    /// Asks the child to stop (`first`), then kills it after `grace` seconds; reaps it.
    @discardableResult
    func stop(_ first: Int32 = SIGTERM, grace: Double = 3) -> (ChildEnd, ChildUsage) {
        signal(first)
        if wait(timeout: grace) == nil {
            signal(SIGKILL)
            reap(options: 0)
        }
        return end!
    }

    private func reap(options: Int32) {
        var status: Int32 = 0
        var usage = rusage()
        let result = wait4(pid, &status, options, &usage)
        guard result == pid else { return }
        let wall = Double(MonotonicClock.nanoseconds() - startedNanoseconds) / 1e9
        let how = ChildEnd(waitStatus: status)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        end = (
            how,
            ChildUsage(
                userSeconds: user, systemSeconds: system, cpuSeconds: user + system,
                voluntarySwitches: usage.ru_nvcsw, involuntarySwitches: usage.ru_nivcsw,
                peakRSSMegabytes: Double(peakResidentKilobytes) / 1024, wallSeconds: wall,
                peakPrivateMegabytes: peakPrivateKilobytes > 0 ? Double(peakPrivateKilobytes) / 1024 : nil,
                threads: threadTimes.isEmpty
                    ? nil
                    : threadTimes.sorted { $0.key < $1.key }.map {
                        ThreadUsage(
                            name: $0.value.name, isRealtime: $0.value.isRealtime,
                            cpuSeconds: Double($0.value.nanoseconds) / 1e9)
                    })
        )
        Cleanup.untrack(pid, isServer: isServer)
    }
}

/// Stops what the bench started when it is interrupted (SIGINT, SIGTERM, SIGHUP): the measured
/// child first (SIGTERM, so micmon still finalizes its file), then the JACK server. The normal
/// exit paths stop them in order themselves; if the bench dies outright, jackd gets SIGTERM from
/// `setpriv --pdeathsig` and every client then sees its server go away.
enum Cleanup {
    /// The pids to stop, readable from the signal handler (0: none).
    static let child = Atomic<Int32>(0)
    static let server = Atomic<Int32>(0)

    static func track(_ pid: pid_t, isServer: Bool) {
        if isServer {
            server.store(pid, ordering: .sequentiallyConsistent)
        } else {
            child.store(pid, ordering: .sequentiallyConsistent)
        }
    }

    static func untrack(_ pid: pid_t, isServer: Bool) {
        if isServer {
            _ = server.compareExchange(expected: pid, desired: 0, ordering: .sequentiallyConsistent)
        } else {
            _ = child.compareExchange(expected: pid, desired: 0, ordering: .sequentiallyConsistent)
        }
    }

    /// Installs the handler. Main thread, before anything is started.
    static func installSignalHandlers() {
        _ = child.load(ordering: .relaxed)  // initialise the globals outside the handler
        _ = server.load(ordering: .relaxed)
        for number in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = benchInterrupted
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
            sigaction(number, &action, nil)
        }
    }
}

/// Stops a pid and waits for it (up to `grace` s, then SIGKILL). Async-signal-safe.
nonisolated func stopAndReap(_ pid: pid_t, grace: Double) {
    guard pid > 0 else { return }
    kill(pid, SIGTERM)
    var waited = 0.0
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 && waited < grace {
        var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
        nanosleep(&pause, nil)
        waited += 0.02
    }
    if waitpid(pid, &status, WNOHANG) == 0 {
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }
}

/// The signal handler: stop the child, then the server, then die of the same signal.
/// Only async-signal-safe calls (kill, waitpid, nanosleep, write, raise).
nonisolated func benchInterrupted(_ number: Int32) {
    let message: StaticString = "\nmicmon-bench: interrupted; stopping the programs and the JACK server\n"
    _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
    stopAndReap(Cleanup.child.exchange(0, ordering: .sequentiallyConsistent), grace: 2)
    stopAndReap(Cleanup.server.exchange(0, ordering: .sequentiallyConsistent), grace: 3)
    raise(number)  // SA_RESETHAND restored the default action
}
