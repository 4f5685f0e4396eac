import Engine
import Foundation
import Glibc

/// A private jackd for one test, started with jackd directly and probed with jack_wait: the test
/// process itself stays a client of the shared server only (a client of a second server inside
/// the test process can crash jack2's libjack 1.9.21). The test stops it by its pid
/// (`signal(SIGTERM)`, `wait`), never by name. Test threads.
enum TestJackServer {
    /// `jackd -n NAME [-S] -d dummy -r 48000 -p PERIOD -C 2 -P 2`, once jack_wait sees it
    /// answer (within 20 s); `synchronous` is `-S`. Its output goes to `log`. A server that does
    /// not come is stopped, and the error names jackd's last words (e.g. "Too many servers
    /// already active": libjack's registry holds a few servers per machine).
    static func start(
        _ name: String, synchronous: Bool = true, periodFrames: Int = 256,
        log: String = TestEnvironment.scratchFolder("jackd") + "/jackd.log"
    ) throws -> ChildProcess {
        let jackd = try ChildProcess(
            ["jackd", "-n", name] + (synchronous ? ["-S"] : [])
                + ["-d", "dummy", "-r", "48000", "-p", String(periodFrames), "-C", "2", "-P", "2"],
            stdout: log, stderr: log)
        if Shell.run("jack_wait", "-s", name, "-w", "-t", "20") != 0 {
            jackd.signal(SIGTERM)
            jackd.wait(timeout: 10)
            let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw MissingRequirement(
                description: "jackd -n \(name) (\(synchronous ? "-S" : "async")) did not start: "
                    + said.split(separator: "\n").suffix(3).joined(separator: " / "))
        }
        return jackd
    }
}

extension PrivateJackServer {
    /// Itself, after saying on stdout (the CI log) why a first jackd had to be replaced.
    func notingRestart() -> PrivateJackServer {
        if let why = firstStartFailure { print("note: \(why); a second jackd answered") }
        if let crash = probeCrash { print("note: private jackd '\(name)': the probe \(crash); jackd listens") }
        return self
    }
}
