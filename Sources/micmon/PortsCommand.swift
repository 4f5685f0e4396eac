import Jack

/// `micmon ports [--output|--input] [-s SERVER]` (hidden): the running server's port names, one
/// a line, for the completion scripts. Main thread.
enum PortsCommand {
    static func run(_ options: PortsOptions) -> ExitCode {
        let client: JackClient
        do {
            client = try JackClient(name: "micmon-ports", serverName: options.serverName)
        } catch {
            return .serverUnavailable
        }
        defer { client.close() }
        let direction: PortDirection? = options.output == options.input ? nil : (options.output ? .output : .input)
        let names = client.portNames(direction: direction)
        Console.out(names.map { $0 + "\n" }.joined())
        return .ok
    }
}
