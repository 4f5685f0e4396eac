import Engine
import Platform
import TerminalUI

/// `micmon demo`: a private dummy JACK server, the built-in demo voice, and the meter (or a
/// recording) on it. Everything started here is stopped before it returns.
enum DemoCommand {
    static func run(_ invocation: CaptureOptions) -> ExitCode {
        if let path = invocation.filePath {
            do { try OutputPath.check(path, force: invocation.force) } catch {
                Console.error("micmon: \(error.description)")
                return .usage
            }
        }
        let serverName = "micmon-demo-\(Child.currentProcessID)"
        Console.error("micmon: " + Messages.startingDemoServer(serverName))
        let server: PrivateJackServer
        do {
            server = try PrivateJackServer(name: serverName, diesWithParent: true)
            if let why = server.firstStartFailure { Console.error("micmon: \(why); started it again") }
        } catch {
            Console.error("micmon: \(error)")
            return .serverUnavailable
        }
        defer { server.stop() }
        let source: DemoSource
        do {
            source = try DemoSource(serverName: serverName, voiceNoise: invocation.denoises ? .fan : .room)
        } catch {
            Console.error("micmon: " + Messages.demoSourceFailed(error.description))
            return .serverUnavailable
        }
        defer { source.stop() }
        Console.error("micmon: " + Messages.demoSource(ports: source.outputPorts))

        var configuration = CaptureConfiguration()
        configuration.clientName = invocation.clientName
        configuration.serverName = serverName
        configuration.sourcePorts = source.outputPorts
        configuration.durationSeconds = invocation.durationSeconds
        configuration.denoises = invocation.denoises
        configuration.denoiseLatency = invocation.denoiseLatency
        configuration.recordedChannels = invocation.recordedChannels
        configuration.loudnessMode = invocation.loudnessMode
        configuration.meterType = invocation.meterType
        if let path = invocation.filePath, let format = invocation.format {
            configuration.recording = .init(path: path, format: format, replacesExisting: invocation.force)
            configuration.recording?.metadata = TakeMetadataOptions(software: CommandTable.version)
        }
        return CaptureCommand.run(configuration, json: invocation.json, labels: invocation.labels)
    }
}
