import Engine
import Foundation
import Jack
import Testing

/// Paths and servers the CLI and integration tests share.
enum TestEnvironment {
    /// The built `micmon` next to the test bundle (`swift test` builds it with the tests).
    static let micmonPath: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        if folder.lastPathComponent == "MacOS" { folder = folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        return folder.appendingPathComponent("micmon").path
    }()

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// A fresh, empty scratch folder for one test.
    static func scratchFolder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "micmon-tests-\(getpid())/\(name)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// The JACK server the integration tests use: `$JACK_DEFAULT_SERVER` when one answers under that
/// name (CI starts one), else a private `jackd -S -d dummy` started here. Under CI=true a
/// missing server is a failure, never a skip.
final class SharedTestServer: @unchecked Sendable {
    let name: String
    let source: TestSignalSource
    var sampleRate: Int { source.client.sampleRate }
    private let privateServer: PrivateJackServer?

    static let shared: Result<SharedTestServer, any Error> = Result { try SharedTestServer() }

    private init() throws {
        if let given = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"], !given.isEmpty,
           let probe = try? JackClient(name: "micmon-test-probe", serverName: given) {
            probe.close()
            name = given
            privateServer = nil
        } else {
            let server = try PrivateJackServer(name: "micmon-test-\(getpid())", periodFrames: 256)
            name = server.name
            privateServer = server
            atexit { SharedTestServer.stopPrivateServer() }
        }
        source = try TestSignalSource.reference(serverName: name)
    }

    static func stopPrivateServer() {
        if case .success(let server) = shared { server.source.stop(); server.privateServer?.stop() }
    }

    /// The shared server, or a recorded failure (CI) / nil (a developer machine without jackd).
    static func require() throws -> SharedTestServer {
        switch shared {
        case .success(let server): return server
        case .failure(let error): throw error
        }
    }
}
