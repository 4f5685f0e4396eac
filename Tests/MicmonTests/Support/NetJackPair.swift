import DSP
import Foundation
import Glibc
import Testing

/// A netjack2 pair for one test: network namespaces `micmon-nj-m` and `micmon-nj-s` built by
/// `.ci/netjack2 up nj` (a veth pair with its own addresses, the multicast route on both ends),
/// a master `jackd -d dummy` with `netmanager` loaded in the first, a slave `jackd -d net -a
/// MASTER` in the second. Every JACK client of both servers runs in a child process (micmon,
/// jack_lsp): the test process stays a client of the shared server only. Servers are stopped by
/// PID and the namespaces deleted by `stop()`. Needs root and iproute2; the tests fail without
/// them under CI. Test threads, one test at a time (the suite is serialized).
final class NetJackPair: @unchecked Sendable {
    /// Server names are fixed, so a slave jackd killed with SIGKILL (which leaves its slot in
    /// jackd's server registry in /dev/shm) has its slot taken back by the next one of that name.
    let masterName = "micmon-nj-master"
    let slaveName = "micmon-nj-slave"
    let masterNamespace = "micmon-nj-m"
    let slaveNamespace = "micmon-nj-s"
    /// The master's side of the veth pair (`.ci/netjack2`'s naming).
    let masterInterface = "mmnj0"
    let masterAddress: String
    /// The netjack2 latency the slave asks for (-l, in periods).
    let latencyPeriods = 2
    let periodFrames = 256
    let sampleRate = 48000
    /// What start-up took: the master until it answered with netmanager loaded, and each join.
    private(set) var masterStartSeconds = 0.0
    private(set) var joinSeconds: [Double] = []
    /// Join attempts that failed and were retried (jackd2 1.9.21 fails one now and then).
    private(set) var failedJoins = 0
    /// Master starts that did not answer and were retried.
    private(set) var failedMasterStarts = 0
    private var master: ChildProcess?
    private var slave: ChildProcess?
    private let folder: String

    /// The repository's `.ci/netjack2`.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".ci/netjack2").path

    /// Whether this machine can build the pair (root, ip, jackd with the net backend).
    static var isAvailable: Bool {
        getuid() == 0
            && (FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
                || FileManager.default.isExecutableFile(atPath: "/sbin/ip")
                || FileManager.default.isExecutableFile(atPath: "/usr/bin/ip"))
    }

    /// Builds the namespaces and starts the master; the slave is started by `startSlave`.
    init() throws {
        try TestEnvironment.require(getuid() == 0, "a netjack2 pair in network namespaces needs root (CI runs as root)")
        _ = try TestEnvironment.executable("ip", hint: "Debian: apt-get install iproute2")
        _ = try TestEnvironment.executable("jackd", hint: "Debian: apt-get install jackd2")
        folder = TestEnvironment.scratchFolder("netjack2")
        let up = try Tool.run(["bash", Self.script, "up", "nj"])
        try TestEnvironment.require(up.status == 0, ".ci/netjack2 up nj failed: \(up.output)")
        masterAddress = up.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let began = Date()
        do {
            // A master that does not answer within 20 s is stopped and started once more. A start
            // was seen to hang before jackd printed anything past its banner, while other servers
            // came and went on the machine (jackd takes a lock on its server registry first).
            for attempt in 1 ... 2 {
                let child = try ChildProcess(
                    [
                        "ip", "netns", "exec", masterNamespace, "jackd", "-n", masterName, "-S", "-d", "dummy", "-r",
                        String(sampleRate), "-p", String(periodFrames), "-C", "2", "-P", "2",
                    ], stdout: folder + "/master.log", stderr: folder + "/master.log")
                master = child
                if Self.waitForServer(masterName, child) { break }
                // jackd 1.9.21 on -d dummy exits without a word when its registry is full.
                let said =
                    (child.isRunning ? "did not answer within 20 s" : "jackd exited (its 8-server registry full?)")
                    + ": " + log("master")
                child.signal(SIGTERM)
                child.wait(timeout: 5)
                master = nil
                failedMasterStarts += 1
                print("netjack2: master start \(attempt) failed: \(said)")
                try TestEnvironment.require(attempt < 2, "the master jackd did not start twice: \(said)")
            }
            let loaded = try Tool.run([
                "ip", "netns", "exec", masterNamespace, "jack_load", "-s", masterName, "netmanager",
            ])
            try TestEnvironment.require(loaded.status == 0, "jack_load netmanager failed: \(loaded.output)")
        } catch {
            stop()
            throw error
        }
        masterStartSeconds = Date().timeIntervalSince(began)
    }

    deinit { stop() }

    /// Waits up to 20 s until server `name` answers; false at once when `jackd` ends first.
    static func waitForServer(_ name: String, _ jackd: ChildProcess) -> Bool {
        TestEnvironment.waitUntil(timeout: 20) {
            !jackd.isRunning || answers(name)
        } && jackd.isRunning
    }

    /// Whether server `name` answers now (`jack_wait -c` says "running"; it exits 0 either way).
    static func answers(_ name: String) -> Bool {
        guard let checked = try? Tool.run(["jack_wait", "-s", name, "-c"]) else { return false }
        return checked.output.split(separator: "\n").contains("running")
    }

    /// The clients on the master that have `from_slave_1` (the slaves joined), in jack_lsp's order.
    func slaveClientsOnMaster() -> [String] {
        guard let listed = try? Tool.run(["jack_lsp", "-s", masterName]), listed.status == 0 else { return [] }
        return listed.output.split(separator: "\n").compactMap { line in
            line.hasSuffix(":from_slave_1") ? String(line.dropLast(":from_slave_1".count)) : nil
        }
    }

    /// Starts a slave named `name` (netjack2's -n) and waits until the master has taken it on
    /// (its log says `New NetMaster started` once more) and shows its client: one that was not
    /// among `existing` (the clients before; netjack2 names the new one `name-01` … while a
    /// client of that name is still there), else `name` itself (the old one was gone first). A
    /// join that fails (the slave ends, says "already deallocated", or nothing shows within 10 s)
    /// is retried, up to 3 attempts. Returns the client's name on the master.
    @discardableResult
    func startSlave(name: String = "mics", existing: Set<String>? = nil) throws -> String {
        let before = existing ?? Set(slaveClientsOnMaster())
        for attempt in 1 ... 3 {
            let began = Date()
            let masterLog = folder + "/master.log"
            func netMasters() -> Int {
                ((try? String(contentsOfFile: masterLog, encoding: .utf8)) ?? "").components(
                    separatedBy: "New NetMaster started"
                ).count - 1
            }
            let started = netMasters()
            let logPath = folder + "/slave-\(joinSeconds.count + failedJoins + 1).log"
            let child = try ChildProcess(
                [
                    "ip", "netns", "exec", slaveNamespace, "jackd", "-n", slaveName, "-S", "-d", "net", "-a",
                    masterAddress, "-n", name, "-C", "2", "-P", "2", "-l", String(latencyPeriods),
                ], stdout: logPath, stderr: logPath)
            slave = child
            var joined: String?
            _ = TestEnvironment.waitUntil(timeout: 10) {
                if netMasters() > started {
                    let clients = slaveClientsOnMaster().filter { $0.hasPrefix(name) }
                    joined = clients.first { !before.contains($0) } ?? (clients.contains(name) ? name : nil)
                }
                let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                return joined != nil || !child.isRunning || text.contains("already deallocated")
            }
            // The slave's own server must answer too (its system ports carry the network).
            if let joined, Self.answers(slaveName) {
                joinSeconds.append(Date().timeIntervalSince(began))
                return joined
            }
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if text.contains("Too many servers already active") {
                // Not a failed join: no retry helps until another server on the machine stops.
                stopSlave()
                throw MissingRequirement(
                    description: "jackd's server registry in /dev/shm is full (8 servers): the slave cannot start")
            }
            failedJoins += 1
            print("netjack2: join attempt \(attempt) failed: \(text.suffix(400))")
            stopSlave()
        }
        throw MissingRequirement(description: "the netjack2 slave did not join in 3 attempts: \(log("master"))")
    }

    /// Stops the slave jackd: SIGTERM (it leaves), or SIGKILL (it vanishes). Waits for it.
    func stopSlave(signal: Int32 = SIGTERM) {
        guard let slave else { return }
        slave.signal(signal)
        let ending = slave.wait(timeout: 5)
        if signal != SIGKILL && ending.wasKilledBySignal && ending.code == SIGKILL {
            print("netjack2: the slave did not stop within 5 s of SIGTERM; killed")
        }
        self.slave = nil
    }

    /// Kills the master jackd (SIGKILL: it vanishes without a word to its slave) and waits for
    /// it. The namespaces stay until `stop()`.
    func killMaster() {
        master?.signal(SIGKILL)
        _ = master?.wait(timeout: 5)
        masterWasKilled = true
    }

    /// Whether `killMaster()` ended the master (`stop()` then has nothing to report of it).
    private var masterWasKilled = false

    /// Takes the master's end of the veth pair down (a cable pulled at the master): the master
    /// can no longer reach its slave, nor send the multicast "suicide" request with which it
    /// removes a slave's client, so that client stays and blocks the master's graph.
    func cutLink() throws {
        let down = try Tool.run(["ip", "-n", masterNamespace, "link", "set", masterInterface, "down"])
        try TestEnvironment.require(down.status == 0, "could not take \(masterInterface) down: \(down.output)")
    }

    /// What a server printed (the last lines), for failure messages.
    func log(_ which: String) -> String {
        let path = which == "master" ? folder + "/master.log" : folder + "/slave-\(joinSeconds.count).log"
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(6).joined(separator: " / ")
    }

    /// Stops both servers by PID (SIGTERM, then SIGKILL after 5 s) and deletes the namespaces.
    /// Safe to call twice.
    func stop() {
        stopSlave()
        if let master {
            master.signal(SIGTERM)
            let ending = master.wait(timeout: 5)
            if ending.wasKilledBySignal && ending.code == SIGKILL && !masterWasKilled {
                print("netjack2: the master did not stop within 5 s of SIGTERM; killed: \(log("master"))")
            }
            self.master = nil
            _ = try? Tool.run(["bash", Self.script, "down", "nj"])
        }
    }

    /// The start-up figures, for the test log.
    var startupText: String {
        "master up in " + String(format: "%.2f", masterStartSeconds) + " s; joins "
            + joinSeconds.map { String(format: "%.2f s", $0) }.joined(separator: ", ") + "; failed joins \(failedJoins)"
            + "; failed master starts \(failedMasterStarts)"
    }
}

/// A command run to its end with its output (stdout and stderr together) kept.
enum Tool {
    struct Result {
        let status: Int32
        let output: String
    }

    static func run(_ arguments: [String], timeout: Double = 30) throws -> Result {
        let path = TestEnvironment.scratchFolder("tool") + "/output"
        let child = try ChildProcess(arguments, stdout: path, stderr: path)
        let ending = child.wait(timeout: timeout)
        let output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: path)
        return Result(status: ending.wasKilledBySignal ? -ending.code : ending.code, output: output)
    }
}

/// A counter source in a child process: `micmon play` of the reference signal (a float WAV
/// made once per test process), its volume 1 and pan centre leaving every sample untouched.
enum ReferencePlayer {
    /// 40 s of `ReferenceSignal`, stereo, 48 kHz float.
    static let file: Result<String, any Error> = Result {
        let path = TestEnvironment.scratchFolder("reference") + "/reference.wav"
        let frames = 40 * 48000
        var samples = [Float](repeating: 0, count: 2 * frames)
        for frame in 0 ..< frames {
            samples[2 * frame] = ReferenceSignal.value(channel: 0, frame: UInt64(frame))
            samples[2 * frame + 1] = ReferenceSignal.value(channel: 1, frame: UInt64(frame))
        }
        try JackIntegrationTests.PlayIntegrationTests.writeFile(path, rate: 48000, channels: 2, samples: samples)
        return path
    }

    /// `micmon play` of the reference on `server` as client `name`, into `destinations` (the
    /// default physical playback ports when empty).
    static func start(server: String, name: String, destinations: [String] = []) throws -> MicmonProcess {
        let path = try file.get()
        return try MicmonProcess(
            ["play", path, "-s", server, "-n", name, "--json"] + destinations.flatMap { ["-o", $0] })
    }
}
