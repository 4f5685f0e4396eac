// The one port resolver: turns the user's port requests (exact names or shell-style patterns)
// into JACK port names, for capture sources, monitor and playback destinations and the latency
// send and return, and picks the default ports by rule when nothing was asked for. Pure
// functions of a `Catalog` of the server's ports (tested without a server). Main thread.

import Jack
import Platform

/// Turns port requests into JACK port names.
public enum PortSelection {
    /// The server's ports as the resolver sees them, in libjack's order.
    public struct Catalog: Sendable {
        public var inputs: [String]
        public var outputs: [String]
        public var physicalInputs: [String]
        public var physicalOutputs: [String]
        public init(
            inputs: [String], outputs: [String], physicalInputs: [String] = [],
            physicalOutputs: [String] = []
        ) {
            self.inputs = inputs
            self.outputs = outputs
            self.physicalInputs = physicalInputs
            self.physicalOutputs = physicalOutputs
        }

        func ports(_ direction: PortDirection) -> [String] { direction == .input ? inputs : outputs }
        func physicalPorts(_ direction: PortDirection) -> [String] {
            direction == .input ? physicalInputs : physicalOutputs
        }
    }

    /// A request matched no port (`available` lists the ports of that kind there are), or
    /// chose a port an earlier request chose already (`repeatedPort`, `earlierRequest`).
    public struct NoMatch: Error, Sendable, CustomStringConvertible {
        public let request: String
        public let available: [String]
        /// "output" for sources (capture), "input" for destinations (playback).
        public var kind = "output"
        /// The port `request` chose that an earlier request had chosen; nil when nothing matched.
        public var repeatedPort: String?
        /// The earlier request that chose `repeatedPort`.
        public var earlierRequest: String?

        public init(
            request: String, available: [String], kind: String = "output", repeatedPort: String? = nil,
            earlierRequest: String? = nil
        ) {
            self.request = request
            self.available = available
            self.kind = kind
            self.repeatedPort = repeatedPort
            self.earlierRequest = earlierRequest
        }

        public var description: String {
            if let port = repeatedPort {
                let earlier = earlierRequest.map { $0 == request ? "twice" : "by '\($0)' and again by '\(request)'" }
                return "the JACK \(kind) port '\(port)' is asked for \(earlier ?? "twice"); give each port once"
            }
            let list = available.isEmpty ? "(none)" : available.joined(separator: ", ")
            return "no JACK \(kind) port matches '\(request)'; available \(kind) ports: \(list)"
        }
    }

    /// Why a request for one port failed: nothing matched, or only a port pointing the other way.
    public enum Mismatch: Error, Sendable {
        case none(available: [String])
        case wrongDirection(found: String)
    }

    /// Whether `request` is a pattern (`*`, `?`, `[`) rather than an exact name.
    public static func isPattern(_ request: String) -> Bool { ShellPattern.isPattern(request) }

    /// The ports `request` names among `ports`, in their order. A request that is exactly a
    /// port's name is that port, even when it has pattern characters (`[`, `*`, `?` are legal in
    /// JACK port names); only a request that names no port exactly is read as a pattern: every
    /// match, in order.
    public static func matches(_ request: String, among ports: [String]) -> [String] {
        if ports.contains(request) { return [request] }
        return isPattern(request) ? ports.filter { ShellPattern.matches(request, $0) } : []
    }

    /// What a session connects to on one side: the ports `requests` name, in order, among the
    /// catalog's ports of `direction` (sources are outputs, destinations inputs); with no
    /// requests, the first `defaultCount` ports `defaults(_:in:)` picks (maybe fewer, maybe none).
    public static func choose(
        _ requests: [String], direction: PortDirection, defaultCount: Int,
        in catalog: Catalog
    ) throws(NoMatch) -> [String] {
        if requests.isEmpty { return Array(defaults(direction, in: catalog).ports.prefix(defaultCount)) }
        return try resolve(requests, among: catalog.ports(direction), kind: direction == .input ? "input" : "output")
    }

    /// Which rule chose the default ports.
    public enum DefaultRule: Sendable, Equatable {
        /// Physical ports: capture outputs that are not monitors, playback inputs named `*:playback_*`.
        case physical
        /// No physical port fits: ports named `*:capture_*` (outputs, not monitors) or
        /// `*:playback_*` (inputs), physical or not (PipeWire's virtual nodes).
        case named
        /// Nothing fits.
        case none
    }

    /// The ports a session takes when the user names none, in libjack's order.
    public struct DefaultPorts: Sendable, Equatable {
        public let ports: [String]
        public let rule: DefaultRule
        /// Every port of that direction, for the message when nothing fits.
        public let candidates: [String]
    }

    /// The default ports of `direction`. Sources (outputs): the physical outputs that are not
    /// monitors, else the outputs named `*:capture_*` that are not monitors. Destinations
    /// (inputs): the physical inputs named `*:playback_*`, else any inputs named `*:playback_*`;
    /// never another input, because PipeWire flags a virtual source's inputs (`input_FL`)
    /// physical and lists them before the sink's. Port order is kept, so the first two are the
    /// first two channels.
    public static func defaults(_ direction: PortDirection, in catalog: Catalog) -> DefaultPorts {
        let all = catalog.ports(direction)
        let physical = catalog.physicalPorts(direction)
        let first: [String]
        let second: [String]
        if direction == .output {
            first = physical.filter { !isMonitor($0) }
            second = all.filter { shortName($0).hasPrefix("capture_") && !isMonitor($0) }
        } else {
            first = physical.filter { shortName($0).hasPrefix("playback_") }
            second = all.filter { shortName($0).hasPrefix("playback_") }
        }
        if !first.isEmpty { return DefaultPorts(ports: first, rule: .physical, candidates: all) }
        if !second.isEmpty { return DefaultPorts(ports: second, rule: .named, candidates: all) }
        return DefaultPorts(ports: [], rule: .none, candidates: all)
    }

    /// No port fits the default rule (see `defaults(_:in:)`): the session refuses to run with
    /// inputs (or outputs) connected to nothing unless told to (`--allow-unconnected`).
    public struct NoDefault: Error, Sendable, CustomStringConvertible {
        public let direction: PortDirection
        public let candidates: [String]
        public init(direction: PortDirection, candidates: [String]) {
            self.direction = direction
            self.candidates = candidates
        }

        public var description: String {
            let list = candidates.isEmpty ? "(none)" : candidates.joined(separator: ", ")
            if direction == .output {
                return "no physical capture port and no output named *:capture_* to record from; "
                    + "output ports: \(list). Choose sources with -p, or run unconnected with --allow-unconnected"
            }
            return "no physical playback port and no input named *:playback_* to play to; "
                + "input ports: \(list). Choose destinations with -o, or run unconnected with --allow-unconnected"
        }
    }

    /// Whether a port is a monitor of a sink rather than a capture: PipeWire's libjack names a
    /// sink's monitor ports `monitor_*` (merged into the node's client) or puts them under a
    /// client named "NODE Monitor".
    public static func isMonitor(_ name: String) -> Bool {
        shortName(name).hasPrefix("monitor_") || clientName(name).hasSuffix(" Monitor")
    }

    /// "client:port" → "port" (the part after the first colon; JACK client names have none).
    static func shortName(_ name: String) -> Substring {
        guard let colon = name.firstIndex(of: ":") else { return name[...] }
        return name[name.index(after: colon)...]
    }

    /// "client:port" → "client".
    static func clientName(_ name: String) -> Substring {
        guard let colon = name.firstIndex(of: ":") else { return "" }
        return name[..<colon]
    }

    /// One port for `request`: the first match among the catalog's ports of `wanted`. A request
    /// that matches only ports of the other direction says so.
    public static func first(_ request: String, wanted: PortDirection, in catalog: Catalog) throws(Mismatch) -> String {
        if let found = matches(request, among: catalog.ports(wanted)).first { return found }
        let other: PortDirection = wanted == .input ? .output : .input
        if let wrong = matches(request, among: catalog.ports(other)).first { throw .wrongDirection(found: wrong) }
        throw .none(available: catalog.ports(wanted))
    }

    /// Resolves requests in order against `outputPorts` (the server's output ports, in libjack's
    /// order). A pattern adds every match in that order, skipping ports chosen before it
    /// (`-p player:out_1 -p 'player:*'`: out_1 first, then the rest). A request that would add
    /// nothing is an error naming the port: an exact name chosen before (`-p a -p a`), or a
    /// pattern whose every match was (silently dropping it would shift every input after it).
    public static func resolve(_ requests: [String], outputPorts: [String]) throws(NoMatch) -> [String] {
        try resolve(requests, among: outputPorts, kind: "output")
    }

    /// The same for any list of ports; `kind` names them in the error ("input", "output").
    public static func resolve(_ requests: [String], among ports: [String], kind: String) throws(NoMatch) -> [String] {
        try resolveWaiting(requests, among: ports, kind: kind, waitsForMissing: false).ports
    }

    /// What `resolveWaiting` chose: one entry per input, in order.
    public struct Resolution: Sendable, Equatable {
        /// Each input's port; "" for an input waiting for a request that matched nothing yet.
        public var ports: [String]
        /// The request (an index into the requests) each input was chosen by.
        public var requestOfInput: [Int]
        /// The inputs waiting for their request to match a port.
        public var waitingInputs: [Int] { ports.indices.filter { ports[$0].isEmpty } }
    }

    /// `resolve` that, when `waitsForMissing`, lets a request that matches nothing yet hold one
    /// input waiting for it (`--allow-unconnected`: the source client starts later), instead of
    /// failing. A request that only repeats ports chosen before is an error either way.
    public static func resolveWaiting(
        _ requests: [String], among ports: [String], kind: String, waitsForMissing: Bool
    ) throws(NoMatch) -> Resolution {
        var chosen: [String] = []
        var chosenBy: [Int] = []
        for (index, request) in requests.enumerated() {
            let found = matches(request, among: ports)
            if found.isEmpty {
                guard waitsForMissing else { throw NoMatch(request: request, available: ports, kind: kind) }
                chosen.append("")
                chosenBy.append(index)
                continue
            }
            let fresh = found.filter { !chosen.contains($0) }
            if fresh.isEmpty, let name = found.first, let earlier = chosen.firstIndex(of: name) {
                throw NoMatch(
                    request: request, available: ports, kind: kind, repeatedPort: name,
                    earlierRequest: requests[chosenBy[earlier]])
            }
            for name in fresh {
                chosen.append(name)
                chosenBy.append(index)
            }
        }
        return Resolution(ports: chosen, requestOfInput: chosenBy)
    }
}
