import Foundation
import Testing

/// The JACK transport driven as a user drives it: `jack_transport` given one command on its
/// stdin (`play`, `stop`, `locate 0`), on a server that must be running. Test threads.
enum JackTransport {
    /// Runs `jack_transport` with `command` on `server`; records an issue when it fails.
    static func send(_ command: String, server: String) throws {
        let transport = try TestEnvironment.executable("jack_transport", hint: "Debian: jackd2")
        let input = TestEnvironment.scratchFolder("transport-cmd") + "/in"
        try (command + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            ["/bin/sh", "-c", "'\(transport)' < '\(input)'"],
            environment: ["JACK_DEFAULT_SERVER": server, "JACK_NO_START_SERVER": "1"])
        #expect(child.wait(timeout: 20) == .init(code: 0, wasKilledBySignal: false), "jack_transport \(command)")
    }
}
