import Engine
import Foundation
import Jack
import Platform
import Testing

/// Paths and servers the CLI and integration tests share.
enum TestEnvironment {
    /// The built `micmon` next to the test bundle (`swift test` builds it with the tests).
    static let micmonPath: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        if folder.lastPathComponent == "MacOS" {
            folder = folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return folder.appendingPathComponent("micmon").path
    }()

    /// Set by .ci/run: under CI nothing a test needs may be missing.
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Whether the tests run as root (mounting a tmpfs needs it).
    static var isRoot: Bool { getuid() == 0 }

    /// For `.enabled(if:)` on a test that needs something optional on a developer's machine (root,
    /// jack_iodelay): it runs when that is `available`, and always under CI, where the test's
    /// `require` then fails it if it is missing. Off CI it shows as skipped, with its reason.
    static func runs(needing available: Bool) -> Bool { available || isCI }

    /// Throws `MissingRequirement` (the test fails) unless `available`.
    static func require(_ available: Bool, _ what: String) throws {
        if !available { throw MissingRequirement(description: what) }
    }

    /// An executable on PATH; throws when it is missing (`hint` says where it comes from).
    static func executable(_ name: String, hint: String) throws -> String {
        guard let path = Child.findExecutable(name) else {
            throw MissingRequirement(description: "\(name) is not installed (\(hint))")
        }
        return path
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` seconds have passed; returns
    /// whether it held. Tests wait on what they need this way, with generous timeouts, never
    /// with a fixed sleep whose length the machine's load could make too short.
    static func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if condition() { return true }
            if Date() >= deadline { return false }
            usleep(10_000)
        }
    }

    /// A fresh, empty scratch folder for one test.
    static func scratchFolder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "micmon-tests-\(getpid())/\(name)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// What a test needs from the machine and does not have (a tool, root, a server). Thrown, it
/// fails the test: nothing a test needs is skipped over silently.
struct MissingRequirement: Error, CustomStringConvertible {
    let description: String
}

/// The JACK server the integration tests use: `$JACK_DEFAULT_SERVER` when it is set (CI starts
/// one; a name that does not answer is an error, not replaced by another server), else a private
/// `jackd -S -d dummy` started here for this test process. Every integration test either gets a
/// server or fails: `require()` throws, it never returns nothing.
final class SharedTestServer: @unchecked Sendable {
    let name: String
    let source: TestSignalSource
    /// The server's rate, read from it: tests derive frame counts from this, never a literal.
    var sampleRate: Int { source.client.sampleRate }
    private let privateServer: PrivateJackServer?

    static let shared: Result<SharedTestServer, any Error> = Result { try SharedTestServer() }

    private init() throws {
        if let given = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"], !given.isEmpty {
            do {
                let probe = try JackClient(name: "micmon-test-probe", serverName: given)
                probe.close()
            } catch {
                throw MissingRequirement(
                    description: """
                        JACK_DEFAULT_SERVER is '\(given)' but no JACK server answers under that name (\(error)): \
                        start it (jackd -n \(given) -S -d dummy), or unset JACK_DEFAULT_SERVER and the tests start a private one
                        """)
            }
            name = given
            privateServer = nil
        } else {
            let server = try PrivateJackServer(name: "micmon-test-\(getpid())", periodFrames: 256).notingRestart()
            name = server.name
            privateServer = server
            atexit { SharedTestServer.stopPrivateServer() }
        }
        source = try TestSignalSource.reference(serverName: name)
    }

    static func stopPrivateServer() {
        if case .success(let server) = shared {
            server.source.stop()
            server.privateServer?.stop()
        }
    }

    /// The shared server; throws (the test fails) when there is none: a dead
    /// `$JACK_DEFAULT_SERVER`, or no jackd to start a private one with.
    static func require() throws -> SharedTestServer {
        switch shared {
        case .success(let server): return server
        case .failure(let error): throw error
        }
    }
}
