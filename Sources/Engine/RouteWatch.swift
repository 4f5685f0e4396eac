// Where each capture input's signal comes from, kept connected: the main thread's side of the
// route-change notes JACK's notification thread queues (SessionCallbacks.swift). An input whose
// source went away is matched again against its `-p` pattern on every change, so a client that
// comes back under another name (netjack2 renames a rejoining slave: mics, then mics-01) is
// reconnected; an input whose request matched nothing at start (`--allow-unconnected`) waits for
// it the same way. Main thread.

import Jack
import Realtime

/// A change in where an input's signal comes from, as the main thread found it.
public struct RouteChange: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// The source port went away: the input reads silence.
        case sourceGone = "source_gone"
        /// The source came back and micmon reconnected it.
        case sourceBack = "source_back"
        /// The input's pattern now matches another port (its source went away and a port of
        /// another name matches): micmon connected that one.
        case sourceMatched = "source_matched"
        /// The input's request matched nothing at start (`--allow-unconnected`) and now names a
        /// port: micmon connected it.
        case sourceFound = "source_found"
        /// Someone else connected or disconnected this input.
        case connectionsChanged = "connections_changed"
    }
    public let kind: Kind
    /// The input (e.g. "in_1").
    public let input: String
    /// The requested source (sourceGone, sourceBack), the newly matched or found one
    /// (sourceMatched, sourceFound) or the input's connections now.
    public let ports: [String]
    /// Seconds into the take when it was seen.
    public let takeSeconds: Double
}

/// Keeps each input connected to the source it asked for. JACK's notification thread only
/// queues "something changed" (the time) on a lock-free ring; the main thread looks at the
/// connections, reconnects a source that came back, and reports what changed. Main thread.
final class RouteWatch {
    /// Change times (JACK µs) from the notification thread (the session's route-change ring).
    private let changes: SPSCRing<UInt64>.Consumer
    private let client: JackClient
    private let ports: [JackPort]
    /// The source each input follows: resolved at start ("" for an input waiting for its
    /// request), replaced when its pattern matches another port after the source went away.
    private(set) var sources: [String]
    /// The `-p` request each input's source was chosen by (an index into `requests`), nil for an
    /// input with no request (the default ports, or none).
    private let requestOfInput: [Int?]
    private let requests: [String]
    private var wasConnected: [Bool]
    /// Whether the input has had a source: false for one waiting for its request until its
    /// first connection, which is reported as `sourceFound`.
    private var hasHadSource: [Bool]
    private var knownConnections: [[String]]
    private var lastCheck: UInt64 = 0
    private(set) var isConnected: [Bool]

    /// `requests` are the `-p` requests `sources` were resolved from, `requestOfInput` the one
    /// each input's source came from (`PortSelection.Resolution`); both empty when the default
    /// ports were taken. An input with a request and no source waits for the request to match.
    init(
        client: JackClient, ports: [JackPort], sources: [String], changes: SPSCRing<UInt64>.Consumer,
        requests: [String] = [], requestOfInput: [Int?] = []
    ) {
        self.changes = changes
        self.client = client
        self.ports = ports
        self.sources = sources
        self.requests = requests
        let requestOf = sources.indices.map { $0 < requestOfInput.count ? requestOfInput[$0] : nil }
        self.requestOfInput = requestOf
        wasConnected = sources.map { !$0.isEmpty }
        hasHadSource = sources.indices.map { !sources[$0].isEmpty || requestOf[$0] == nil }
        isConnected = wasConnected
        knownConnections = sources.map { $0.isEmpty ? [] : [$0] }
    }

    /// For each input whose source is gone and whose request is a pattern, and each input still
    /// waiting for its request (a pattern or an exact name), the first port the request matches
    /// now that no other input follows (in libjack's order, so in_1, in_2 of
    /// `-p 'mics*:from_slave_*'` take from_slave_1, from_slave_2 of the renamed client).
    /// Ports of micmon's own client never match. Returns the inputs that got a new source.
    /// `connections`: each input's connections now; a source among its input's exists, so only
    /// the others are looked up by name (`jack_port_by_name` walks the server's port table).
    private func matchAgain(connections: [[String]]) -> [Int] {
        let gone = sources.indices.filter { index in
            let source = sources[index]
            if source.isEmpty { return requestOfInput[index] != nil }
            return !connections[index].contains(source) && !client.portExists(source)
        }
        guard !gone.isEmpty else { return [] }
        let own = client.name + ":"
        let outputs = client.portNames(direction: .output).filter { !$0.hasPrefix(own) }
        var changed: [Int] = []
        for index in gone {
            guard let request = requestOfInput[index],
                sources[index].isEmpty || PortSelection.isPattern(requests[request])
            else { continue }
            let followed = Set(sources.indices.filter { $0 != index }.map { sources[$0] })
            let candidate = PortSelection.matches(requests[request], among: outputs).first { !followed.contains($0) }
            if let candidate, candidate != sources[index] {
                sources[index] = candidate
                changed.append(index)
            }
        }
        return changed
    }

    /// Looks again when JACK reported a change, or once a second (servers such as PipeWire's
    /// may not report every change). Main thread.
    func poll(takeSeconds: Double) -> [RouteChange] {
        let queued = changes.readableSlices()
        changes.commitRead(count: queued.count)
        let now = JackClock.now()
        guard queued.count > 0 || now &- lastCheck > 1_000_000 else { return [] }
        lastCheck = now
        var found: [RouteChange] = []
        var needsAnotherLook = false
        defer { if needsAnotherLook { lastCheck = 0 } }
        let connectionsNow = ports.map { client.connections(of: $0) }
        let rematched = Set(matchAgain(connections: connectionsNow))
        for (index, port) in ports.enumerated() {
            let source = sources[index]
            var connections = connectionsNow[index]
            var connected = !source.isEmpty && connections.contains(source)
            // Looked up once: a port that appears between two lookups would read as gone and
            // present in one look.
            let exists = connected || (!source.isEmpty && client.portExists(source))
            if !source.isEmpty && !connected && exists {
                if (try? client.connect(source: source, destination: port.fullName)) != nil {
                    connections = client.connections(of: port)
                    connected = true
                    if !hasHadSource[index] {
                        hasHadSource[index] = true
                        found.append(
                            RouteChange(
                                kind: .sourceFound, input: port.shortName, ports: [source], takeSeconds: takeSeconds))
                    } else if rematched.contains(index) {
                        found.append(
                            RouteChange(
                                kind: .sourceMatched, input: port.shortName, ports: [source], takeSeconds: takeSeconds))
                    } else {
                        // Not connected at the last look, or connected then and not now: the
                        // source went away and came back under its name between two looks (a
                        // client replaced at once), or another client disconnected it.
                        found.append(
                            RouteChange(
                                kind: .sourceBack, input: port.shortName, ports: [source], takeSeconds: takeSeconds))
                    }
                } else {
                    // The source still exists but cannot be connected: a client that quits
                    // drops its connections before its ports. Decide on the next look.
                    needsAnotherLook = true
                    continue
                }
            }
            if wasConnected[index] && !connected && !exists {
                found.append(
                    RouteChange(kind: .sourceGone, input: port.shortName, ports: [source], takeSeconds: takeSeconds))
            } else if connections.sorted() != knownConnections[index].sorted() && !(connected && !wasConnected[index])
                && !rematched.contains(index)
            {
                found.append(
                    RouteChange(
                        kind: .connectionsChanged, input: port.shortName, ports: connections, takeSeconds: takeSeconds))
            }
            wasConnected[index] = connected
            isConnected[index] = !connections.isEmpty
            knownConnections[index] = connections
        }
        return found
    }
}
