// `micmon mark|pause|resume|stop|status`: the client side of a recorder's control socket.
// Main thread.

import Platform

/// `micmon mark|pause|resume|stop|status`: one line to a running recorder's control socket, its
/// answer printed. Main thread.
enum ControlCommand {
    static func run(_ options: ControlOptions) -> ExitCode {
        guard let directory = ControlSocketPath.directory else {
            Console.error("micmon: XDG_RUNTIME_DIR is not set, so no recorder has a control socket to reach")
            return .serverUnavailable
        }
        let path: String
        if let name = options.recorderName {
            path = ControlSocketPath.path(name: name, in: directory)
        } else {
            let live = ControlSocketPath.names(in: directory).filter {
                ControlSocketPath.isLive(ControlSocketPath.path(name: $0, in: directory))
            }
            guard let only = live.first else {
                Console.error("micmon: no recorder is running (no live socket in \(directory))")
                return .serverUnavailable
            }
            guard live.count == 1 else {
                Console.error(
                    "micmon: \(live.count) recorders are running (\(live.joined(separator: ", "))); pick one with -n NAME"
                )
                return .usage
            }
            path = ControlSocketPath.path(name: only, in: directory)
        }
        let answer: String
        do { answer = try ControlSocketClient.send(options.line, to: path) } catch {
            Console.error("micmon: \(error.description)")
            return .serverUnavailable
        }
        if answer.hasPrefix("ok") {
            let rest = answer.dropFirst(2).drop { $0 == " " }
            Console.out((rest.isEmpty ? "ok" : String(rest)) + "\n")
            return .ok
        }
        Console.error("micmon: " + (answer.isEmpty ? "the recorder closed the connection without an answer" : answer))
        return .usage
    }
}
