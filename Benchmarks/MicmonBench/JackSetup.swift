import DSP
import Engine
import Glibc
import Jack
import Platform

/// The private JACK server the process bench runs on: `jackd -n NAME -S -d dummy …`, started
/// under `setpriv --pdeathsig TERM` (when present) so it stops even if the bench is killed.
/// Like `Engine.PrivateJackServer`, but with its pid in reach of the bench's signal handler.
final class BenchServer {
    let name: String
    let sampleRate: Int
    let periodFrames: Int
    let arguments: [String]
    private let child: Child
    private let logPath: String

    init(
        name: String, sampleRate: Int, periodFrames: Int, captureChannels: Int, playbackChannels: Int,
        logPath: String
    ) throws(SpawnError) {
        self.name = name
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.logPath = logPath
        arguments = [
            "jackd", "-n", name, "-S", "-d", "dummy", "-r", String(sampleRate), "-p", String(periodFrames),
            "-C", String(captureChannels), "-P", String(playbackChannels),
        ]
        let guardPrefix = access("/usr/bin/setpriv", X_OK) == 0 ? ["/usr/bin/setpriv", "--pdeathsig", "TERM"] : []
        child = try Child(guardPrefix + arguments, stdout: logPath, stderr: logPath, isServer: true)

        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            if child.poll() != nil { break }
            if let probe = try? JackClient(name: "micmon-bench-probe", serverName: name) {
                probe.close()
                return
            }
            sleep(seconds: 0.05)
        }
        child.stop()
        let log = readText(logPath)
        let banner = ["jackdmp ", "Copyright ", "jackdmp comes", "This is free software", "under certain conditions"]
        let lines = log.split(separator: "\n").filter { line in !banner.contains { line.hasPrefix($0) } }
        var hint = ""
        if log.contains("Too many servers") {
            hint =
                " (libjack's registry holds 8 servers; the slot of a server that was killed stays taken until a "
                + "server of the same name starts and stops cleanly: `jackd -n NAME -d dummy`, then SIGTERM)"
        }
        let reason = lines.suffix(3).joined(separator: " / ")
        throw SpawnError(description: "the JACK server '\(name)' did not start: \(reason)\(hint)")
    }

    var commandLine: String { arguments.joined(separator: " ") }

    /// Why the server is gone, if it ended on its own (crashed or was killed by someone else).
    var unexpectedEnd: String? {
        child.poll().map { "the JACK server ended by itself (\($0.0.text))" }
    }

    /// SIGTERM, then SIGKILL after 3 s. Safe to call twice. The log stays (it is in the bench's
    /// scratch folder unless `keepLog` moved it).
    func stop() {
        child.stop(SIGTERM, grace: 3)
    }

    /// Moves the server's log to `path` (to look at after a failed run).
    func keepLog(at path: String) {
        rename(logPath, path)
    }
}

/// A JACK client in the bench process that plays `ReferenceSignal` on `out_1` … `out_N`,
/// counting frames from its first cycle (the pattern of Tests/MicmonTests/Support/TestSignal).
/// Port k plays `SignalSource.value(channel: k, frame:)`: the reference's two channels, each
/// pair of ports a stretch further along the signal, so every channel differs from every other.
final class SignalSource {
    let client: JackClient
    let portNames: [String]
    private let state: UnsafeMutablePointer<SignalSourceState>

    /// Frames between the signals of successive port pairs.
    static let pairOffset: UInt64 = 7919

    /// The sample port `channel` plays at source frame `frame`. Any thread; realtime-safe.
    @inline(__always)
    static func value(channel: Int, frame: UInt64) -> Float {
        ReferenceSignal.value(channel: channel & 1, frame: frame &+ UInt64(channel >> 1) &* pairOffset)
    }

    /// With `traceCapacity` > 0 the source notes its first `traceCapacity` cycles
    /// (`SignalSourceCycle`), read by `tracedCycles()` after the client is closed.
    init(serverName: String, clientName: String, channelCount: Int = 2, traceCapacity: Int = 0) throws(JackError) {
        client = try JackClient(name: clientName, serverName: serverName)
        var handles: [OpaquePointer] = []
        var names: [String] = []
        for index in 1 ... channelCount {
            let port = try client.registerPort(name: "out_\(index)", direction: .output)
            handles.append(port.handle)
            names.append(port.fullName)
        }
        portNames = names
        let ports = UnsafeMutablePointer<OpaquePointer>.allocate(capacity: channelCount)
        ports.initialize(from: handles, count: channelCount)
        let trace = traceCapacity > 0 ? UnsafeMutablePointer<SignalSourceCycle>.allocate(capacity: traceCapacity) : nil
        trace?.initialize(repeating: SignalSourceCycle(), count: traceCapacity)
        state = .allocate(capacity: 1)
        state.initialize(
            to: SignalSourceState(
                ports: ports, count: channelCount, frame: 0, client: client.handle, trace: trace,
                traceCapacity: max(traceCapacity, 0)))
        try client.setProcessCallback(signalSourceProcess, context: UnsafeMutableRawPointer(state))
        try client.activate()
    }

    /// Closes the client (no more callbacks) before the state goes. Main thread.
    deinit {
        client.close()
        state.pointee.ports.deallocate()
        state.pointee.trace?.deallocate()
        state.deallocate()
    }

    /// The cycles noted (with `traceCapacity`). Main thread, once the source is stopped or the
    /// take it fed has ended (the realtime thread writes only past `traceCount`).
    func tracedCycles() -> [SignalSourceCycle] {
        guard let trace = state.pointee.trace else { return [] }
        let count = min(state.pointee.traceCount, state.pointee.traceCapacity)
        // SAFETY: `trace` holds `traceCapacity` cycles; the realtime thread has stopped writing.
        return Array(UnsafeBufferPointer(start: trace, count: count))
    }
}

/// One cycle of the source as it saw it: the signal frame it rendered from, the server's frame
/// counter and cycle start (`jack_get_cycle_times`), and when it entered and left the callback
/// (JACK microseconds). A frame that advances while the counter does not, or a counter that
/// jumps, says what the server did to the source.
struct SignalSourceCycle: BitwiseCopyable {
    var frame: UInt64 = 0
    var counter: UInt32 = 0
    var frameCount: UInt32 = 0
    var cycleStartUsecs: UInt64 = 0
    var enteredUsecs: UInt64 = 0
    var leftUsecs: UInt64 = 0
}

struct SignalSourceState {
    let ports: UnsafeMutablePointer<OpaquePointer>
    let count: Int
    var frame: UInt64
    let client: OpaquePointer
    let trace: UnsafeMutablePointer<SignalSourceCycle>?
    let traceCapacity: Int
    var traceCount = 0
}

/// The source's process callback: renders the next `frameCount` frames of the signal into every
/// output port. Realtime thread: port buffers from libjack, then plain arithmetic.
nonisolated func signalSourceProcess(_ frameCount: UInt32, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    // SAFETY: SignalSource passes its initialized state and frees it only after closing the client.
    let state = context.assumingMemoryBound(to: SignalSourceState.self)
    let entered = JackClock.now()
    let start = state.pointee.frame
    for channel in 0 ..< state.pointee.count {
        // SAFETY: `count` port handles, registered by the source.
        let buffer = JackPortBuffer.samples(state.pointee.ports[channel], frames: frameCount)
        for i in 0 ..< Int(frameCount) {
            // SAFETY: libjack's buffer holds frameCount samples.
            buffer[i] = SignalSource.value(channel: channel, frame: start &+ UInt64(i))
        }
    }
    state.pointee.frame &+= UInt64(frameCount)
    if let trace = state.pointee.trace, state.pointee.traceCount < state.pointee.traceCapacity {
        let cycle = JackClock.cycle(state.pointee.client)
        // SAFETY: traceCount < traceCapacity, the trace's size; only this thread writes it.
        trace[state.pointee.traceCount] = SignalSourceCycle(
            frame: start, counter: cycle.startFrame, frameCount: frameCount, cycleStartUsecs: cycle.startUsecs,
            enteredUsecs: entered, leftUsecs: JackClock.now())
    }
    state.pointee.traceCount &+= 1
    return 0
}
