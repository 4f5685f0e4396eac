// Where each capture input's signal comes from, kept connected: the main thread's side of the
// route-change notes JACK's notification thread queues (SessionCallbacks.swift). Main thread.

import Jack
import Realtime

/// A change in where an input's signal comes from, as the main thread found it.
public struct RouteChange: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// The source port went away: the input reads silence.
        case sourceGone = "source_gone"
        /// The source came back and micmon reconnected it.
        case sourceBack = "source_back"
        /// Someone else connected or disconnected this input.
        case connectionsChanged = "connections_changed"
    }
    public let kind: Kind
    /// The input (e.g. "in_1").
    public let input: String
    /// The requested source (sourceGone, sourceBack) or the input's connections now.
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
    private let sources: [String]
    private var wasConnected: [Bool]
    private var knownConnections: [[String]]
    private var lastCheck: UInt64 = 0
    private(set) var isConnected: [Bool]

    init(client: JackClient, ports: [JackPort], sources: [String], changes: SPSCRing<UInt64>.Consumer) {
        self.changes = changes
        self.client = client
        self.ports = ports
        self.sources = sources
        wasConnected = sources.map { !$0.isEmpty }
        isConnected = wasConnected
        knownConnections = sources.map { $0.isEmpty ? [] : [$0] }
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
        for (index, port) in ports.enumerated() {
            let source = sources[index]
            var connections = client.connections(of: port)
            var connected = !source.isEmpty && connections.contains(source)
            if !source.isEmpty && !connected && client.portExists(source) {
                if (try? client.connect(source: source, destination: port.fullName)) != nil {
                    connections = client.connections(of: port)
                    connected = true
                    if !wasConnected[index] {
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
            if wasConnected[index] && !connected && !client.portExists(source) {
                found.append(
                    RouteChange(kind: .sourceGone, input: port.shortName, ports: [source], takeSeconds: takeSeconds))
            } else if connections.sorted() != knownConnections[index].sorted() && !(connected && !wasConnected[index]) {
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
