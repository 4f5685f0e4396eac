import Engine
import Glibc

/// `micmon demo`: a private dummy JACK server, the built-in demo voice, and the meter (or a
/// recording) on it. Everything started here is stopped before it returns.
enum DemoCommand {
    static func run(_ invocation: Invocation) -> ExitCode {
        if let path = invocation.filePath {
            do { try OutputPath.check(path, force: invocation.force) } catch {
                Console.error("micmon: \(error.description)")
                return .usage
            }
        }
        let serverName = "micmon-demo-\(getpid())"
        Console.error("micmon: starting a private JACK server '\(serverName)' (dummy backend, 48 kHz, 256 frames)")
        let server: PrivateJackServer
        do {
            server = try PrivateJackServer(name: serverName, diesWithParent: true)
        } catch {
            Console.error("micmon: \(error)")
            return .serverUnavailable
        }
        defer { server.stop() }
        let source: DemoSource
        do {
            source = try DemoSource(serverName: serverName)
        } catch {
            Console.error("micmon: the demo source could not start: \(error.description)")
            return .serverUnavailable
        }
        defer { source.stop() }
        Console.error("micmon: demo voice on \(source.outputPorts.joined(separator: ", ")) (in_1 = primary mic, in_2 = reference mic); Ctrl-C stops")

        var configuration = CaptureConfiguration()
        configuration.clientName = invocation.clientName
        configuration.serverName = serverName
        configuration.sourcePorts = source.outputPorts
        configuration.durationSeconds = invocation.durationSeconds
        configuration.denoises = invocation.denoises
        configuration.recordedChannels = invocation.recordedChannels
        if let path = invocation.filePath, let format = invocation.format {
            configuration.recording = .init(path: path, format: format)
        }
        return CaptureCommand.run(configuration, json: invocation.json)
    }
}
