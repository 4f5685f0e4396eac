import Platform
import Synchronization
import Testing

@Suite("Platform")
struct PlatformTests {
    @Test("a worker thread runs its body, and join returns only after it finished")
    func workerJoins() throws {
        let done = Atomic<Int>(0)
        let thread = try #require(
            WorkerThread {
                sleep(seconds: 0.05)
                done.store(1, ordering: .releasing)
            })
        thread.join()
        #expect(done.load(ordering: .acquiring) == 1)
        thread.join()  // a second join is a no-op
    }

    @Test("a named worker thread carries its name in /proc (cut to 15 bytes); an unnamed one its process's")
    func workerThreadNames() throws {
        let seen = Mutex<[String]>([])
        for name in ["micmon-writer", "micmon-analysis-thread", nil] as [String?] {
            let thread = try #require(
                WorkerThread(name: name) {
                    let comm = FileSystem.readWhole("/proc/thread-self/comm").map {
                        String(decoding: $0, as: UTF8.self)
                    }
                    seen.withLock { $0.append(comm ?? "?") }
                })
            thread.join()
        }
        let names = seen.withLock { $0 }
        #expect(names.count == 3)
        #expect(names.first == "micmon-writer\n")
        #expect(names.dropFirst().first == "micmon-analysis\n")
        #expect(names.last != "micmon-writer\n" && names.last != "micmon-analysis\n")
    }

    @Test("a wake signal returns true when signalled and false when its timeout passes")
    func wakeSignal() {
        let signal = WakeSignal()
        let began = MonotonicClock.nanoseconds()
        #expect(signal.wait(timeout: .milliseconds(30)) == false)
        #expect(MonotonicClock.nanoseconds() - began >= 30_000_000)
        signal.signal()
        #expect(signal.wait(timeout: .seconds(10)) == true)
    }

    @Test("Durations become whole nanoseconds; negative ones count as none")
    func durations() {
        #expect(WakeSignal.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
        #expect(WakeSignal.nanoseconds(.nanoseconds(7)) == 7)
        #expect(WakeSignal.nanoseconds(.seconds(-1)) == 0)
    }

    @Test("the monotonic clocks advance, and the raw clock reads microseconds")
    func clocks() {
        let nanoseconds = MonotonicClock.nanoseconds()
        let microseconds = MonotonicClock.rawMicroseconds()
        sleep(seconds: 0.01)
        #expect(MonotonicClock.nanoseconds() - nanoseconds >= 10_000_000)
        let rawElapsed = MonotonicClock.rawMicroseconds() - microseconds
        #expect(rawElapsed >= 9_000 && rawElapsed < 10_000_000)
    }

    @Test("waitPolling returns true once the condition holds, false at its timeout or when it gives up")
    func polling() {
        var calls = 0
        #expect(
            waitPolling(
                timeout: 5,
                until: {
                    calls += 1
                    return calls == 3
                }))
        #expect(calls == 3)
        #expect(!waitPolling(timeout: 0.02, until: { false }))
        #expect(!waitPolling(timeout: 5, until: { false }, givingUpIf: { true }))
    }

    @Test("flush-to-zero is set on the calling thread only")
    func flushToZero() throws {
        let callerBefore = ThreadEnvironment.flushesToZero
        let workerAfter = Atomic<Bool>(false)
        let thread = try #require(
            WorkerThread {
                ThreadEnvironment.enableFlushToZero()
                workerAfter.store(ThreadEnvironment.flushesToZero, ordering: .relaxed)
            })
        thread.join()
        #expect(workerAfter.load(ordering: .relaxed) == true)
        #expect(ThreadEnvironment.flushesToZero == callerBefore)
    }

    @Test(
        "shell patterns match as fnmatch does, and only *, ? and [ make a pattern",
        arguments: [
            ("system:capture_*", "system:capture_1", true),
            ("system:capture_?", "system:capture_12", false),
            ("mics*:from_slave_1", "mics-01:from_slave_1", true),
            ("a[12]", "a2", true),
            ("a[12]", "a3", false),
        ])
    func patterns(pattern: String, name: String, matches: Bool) {
        #expect(ShellPattern.matches(pattern, name) == matches)
        #expect(ShellPattern.isPattern(pattern))
        #expect(!ShellPattern.isPattern(name))
    }

    @Test("file status tells files from folders, and nothing from something")
    func fileStatus() throws {
        #expect(PathEntry(path: "/", followingLinks: true)?.isDirectory == true)
        #expect(PathEntry(path: "/proc/self/status", followingLinks: true)?.kind == .regular)
        #expect(PathEntry(path: "/proc/self/exe", followingLinks: false)?.kind == .symbolicLink)
        #expect(PathEntry(path: "/nonexistent/micmon", followingLinks: true) == nil)
        #expect(SystemError.current == .noSuchFile)
        #expect(SystemError.noSuchFile.description == "No such file or directory")
        #expect(FileSystem.parentFolder(of: "take.wav") == ".")
        #expect(FileSystem.parentFolder(of: "/take.wav") == "/")
        #expect(FileSystem.parentFolder(of: "a/b/take.wav") == "a/b")
    }

    @Test("a spawned child's exit code and killing signal are reported")
    func children() throws {
        let exited = try spawnChild(["sh", "-c", "exit 3"]).get()
        #expect(Child.wait(exited) == .exited(3))
        let sleeper = try spawnChild(["sleep", "30"]).get()
        #expect(Child.poll(sleeper) == nil)
        #expect(Child.send(SignalNumber.terminate, to: sleeper))
        #expect(Child.wait(sleeper) == .signaled(SignalNumber.terminate))
        #expect(ChildEnd.signaled(15).text == "signal 15")
        if case .failure(let error) = spawnChild(["/nonexistent/program"]) {
            #expect(error.description.hasPrefix("/nonexistent/program could not be run: "))
        } else {
            Issue.record("a missing program was spawned")
        }
    }

    @Test("the environment is read as it is set")
    func environment() throws {
        let path = try #require(Environment.value("PATH"))
        #expect(!path.isEmpty)
        #expect(Environment.value("MICMON_SURELY_UNSET_VARIABLE") == nil)
        #expect(Environment.temporaryFolder.hasSuffix("/"))
        #expect(Child.findExecutable("sh") != nil)
        #expect(Child.findExecutable("micmon-no-such-program") == nil)
    }

    @Test("a write to a closed descriptor fails instead of trapping")
    func streams() {
        #expect(!TerminalDevice.isTerminal(-1))
        #expect(TerminalDevice.columns(-1) == nil)
    }
}
