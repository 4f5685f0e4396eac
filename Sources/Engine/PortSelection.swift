import Glibc
import Jack

/// Turns the user's `-p` requests (exact names or shell-style patterns) into JACK source ports.
public enum PortSelection {
    /// A request matched no output port. `available` lists the output ports there are.
    public struct NoMatch: Error, Sendable, CustomStringConvertible {
        public let request: String
        public let available: [String]
        /// "output" for sources (capture), "input" for destinations (playback).
        public var kind = "output"
        public var description: String {
            let list = available.isEmpty ? "(none)" : available.joined(separator: ", ")
            return "no JACK \(kind) port matches '\(request)'; available \(kind) ports: \(list)"
        }
    }

    /// Whether `request` is a pattern (`*`, `?`, `[`) rather than an exact name.
    public static func isPattern(_ request: String) -> Bool {
        request.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    /// Resolves requests in order against `outputPorts` (the server's output ports, in libjack's
    /// order). A pattern adds every match in that order; duplicates are kept once.
    public static func resolve(_ requests: [String], outputPorts: [String]) throws(NoMatch) -> [String] {
        try resolve(requests, among: outputPorts, kind: "output")
    }

    /// The same for any list of ports; `kind` names them in the error ("input", "output").
    public static func resolve(_ requests: [String], among ports: [String], kind: String) throws(NoMatch) -> [String] {
        let outputPorts = ports
        var chosen: [String] = []
        for request in requests {
            let matches: [String]
            if isPattern(request) {
                matches = outputPorts.filter { fnmatch(request, $0, 0) == 0 }
            } else {
                matches = outputPorts.contains(request) ? [request] : []
            }
            if matches.isEmpty { throw NoMatch(request: request, available: outputPorts, kind: kind) }
            for name in matches where !chosen.contains(name) { chosen.append(name) }
        }
        return chosen
    }
}
