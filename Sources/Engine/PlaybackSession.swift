// A playback session (`micmon play`): the session core with the playback kernel plugged in, the
// reader thread, and the route check. Its configuration and errors. Main thread only.

import DSP
import Jack
import Platform
import Realtime
import SoundFile

/// What `micmon play` should do. Plain values, checked by the caller.
public struct PlaybackConfiguration: Sendable {
    public enum RouteLossAction: String, Sendable { case pause, stop }

    public var clientName = "micmon"
    public var serverName: String?
    public var path = ""
    /// `-o` requests (exact names or patterns); empty means the first two ports of the default
    /// rule (`PortSelection.defaults`: playback inputs, never a source's inputs).
    public var destinations: [String] = []
    /// `--allow-unconnected`: with no `-o` and no port the default rule accepts, play to nothing
    /// instead of refusing to start.
    public var allowsUnconnected = false
    public var volume = 1.0
    public var pan = 0.0
    /// 0 plays once, N plays N + 1 times, −1 loops until stopped.
    public var loops = 0
    /// Varispeed factor (pitch follows speed).
    public var rate = 1.0
    public var onRouteLoss = RouteLossAction.pause
    public var ringSeconds = 2.0
    public init() {}
}

public enum PlaybackError: Error, CustomStringConvertible {
    case jack(JackError)
    case unknownPort(PortSelection.NoMatch)
    /// No `-o` and no port the default rule accepts, without `--allow-unconnected`.
    case noDefaultPorts(PortSelection.NoDefault)
    case file(SoundFileError)
    case conversion(String)

    public var description: String {
        switch self {
        case .jack(let error): return error.description
        case .unknownPort(let error): return error.description
        case .noDefaultPorts(let error): return error.description
        case .file(let error): return error.description
        case .conversion(let message): return message
        }
    }
}

/// A route change seen by `checkRoute()`.
public enum RouteEvent: Equatable, Sendable {
    case lost([String])
    case restored([String])
}

/// A running playback: JACK client with `out_1`, `out_2`, the reader thread and the realtime
/// kernel. Create, `start()`, poll from the main thread, `stop()`. Main thread only.
public final class PlaybackSession {
    public var client: JackClient { core.client }
    public let sampleRate: Int
    public let fileSampleRate: Int
    public let fileChannelCount: Int
    public let fileFrameCount: Int64
    /// The destinations each output is connected to (out_1 first).
    public let destinations: [String]
    public let gains: PanLaw
    /// Output frames per file pass after rate conversion (an estimate when resampling).
    public let framesPerPass: Double
    public let plays: Int?
    public private(set) var isStopped = false
    private let configuration: PlaybackConfiguration
    private let core: JackSession<PlaybackKernel>
    private let ports: [JackPort]
    private let counters: UnsafeMutablePointer<PlaybackCounters>
    private let mailbox = LatestValueMailbox(count: 2, initial: ChannelMeter())
    private let ring: SPSCRing<Float>
    private let reader: PlaybackReader
    private let missedRing = SPSCRing<DropEvent>(capacity: 1024)
    private var missedLog: [DropEvent] = []
    private let uncertainRing = SPSCRing<DropEvent>(capacity: 1024)
    private var uncertainLog: [DropEvent] = []

    /// Opens the file, connects to the server, registers the outputs, resolves the destinations
    /// and prepares all realtime memory. Nothing plays until `start()`.
    public init(_ configuration: PlaybackConfiguration) throws(PlaybackError) {
        self.configuration = configuration
        let file: SoundFileReader
        do { file = try SoundFileReader(path: configuration.path) } catch { throw .file(error) }
        guard file.channelCount > 0, file.sampleRate > 0 else {
            throw .file(SoundFileError(.open, path: configuration.path, message: "the file has no audio"))
        }
        fileSampleRate = file.sampleRate
        fileChannelCount = file.channelCount
        fileFrameCount = file.frameCount
        do {
            core = try JackSession(clientName: configuration.clientName, serverName: configuration.serverName)
        } catch {
            throw .jack(error)
        }
        sampleRate = core.sampleRate

        var chosen: [String]
        let catalog = core.portCatalog()
        do {
            chosen = try PortSelection.choose(
                configuration.destinations, direction: .input, defaultCount: 2, in: catalog)
        } catch {
            throw .unknownPort(error)
        }
        if configuration.destinations.isEmpty && chosen.isEmpty && !configuration.allowsUnconnected {
            throw .noDefaultPorts(PortSelection.NoDefault(direction: .input, candidates: catalog.inputs))
        }
        if chosen.count == 1 { chosen.append(chosen[0]) }  // one destination hears out_1 only
        destinations = Array(chosen.prefix(2))

        do { ports = try core.registerPorts("out", count: 2, direction: .output) } catch { throw .jack(error) }
        gains = PanLaw(volume: configuration.volume, pan: configuration.pan, sourceChannels: min(file.channelCount, 2))
        let ratio = Double(sampleRate) / Double(file.sampleRate) / configuration.rate
        framesPerPass = Double(file.frameCount) * ratio
        plays = configuration.loops < 0 ? nil : configuration.loops + 1

        let memory = core.memory
        counters = memory.make(PlaybackCounters())
        let placeholder = memory.make(repeating: Float(0), count: 1)
        ring = SPSCRing<Float>(capacity: max(Int(configuration.ringSeconds * Double(sampleRate)), 16384) * 2)
        memory.keep(ring)
        memory.keep(mailbox)
        memory.keep(missedRing)
        memory.keep(uncertainRing)
        do {
            reader = try PlaybackReader(
                file: file, ring: ring.producer, counters: counters, loops: configuration.loops, ratio: ratio)
        } catch {
            throw .conversion("\(error)")
        }
        var kernel = PlaybackKernel(
            link: core.link, ports: memory.make(copying: ports.map(\.handle)),
            outputs: memory.make(repeating: placeholder, count: 2), frames: ring.consumer, gains: gains,
            meters: memory.make(repeating: ChannelMeter(), count: 2),
            meterCoefficients: MeterCoefficients(sampleRate: Double(sampleRate)), meterMailbox: mailbox.writer,
            counters: counters)
        kernel.missedGaps = missedRing.producer
        kernel.uncertainGaps = uncertainRing.producer
        kernel.lateRepeatIsRead = JackClient.isPipeWire
        kernel.timeline = TimelineJudge(sampleRate: sampleRate)
        do { try core.install(kernel, process: playbackProcess) } catch { throw .jack(error) }
    }

    deinit {
        stop()
    }

    /// Starts the reader, lets it fill the ring, activates and connects. Main thread.
    public func start() throws(PlaybackError) {
        reader.start()
        // Give the reader a head start so the first cycles do not starve.
        let headStart = min(ring.capacity / 2, 8192 * 2)
        _ = waitPolling(
            timeout: 1, interval: 0.005,
            until: {
                ring.consumer.availableToRead() >= headStart || reader.hasFailed.load(ordering: .acquiring)
                    || counters.pointee.framesTotal.load(ordering: .acquiring) != .max
            })
        do {
            try core.activate()
            try connect()
        } catch {
            throw .jack(error)
        }
        counters.pointee.isArmed.store(true, ordering: .relaxed)
    }

    private func connect() throws(JackError) {
        for (port, destination) in zip(ports, destinations) {
            try client.connect(source: port.fullName, destination: destination)
        }
    }

    /// The output meters (out_1, out_2). Main thread.
    public func readings() -> [MeterReading] { mailbox.readLatest().0.map(\.reading) }

    public var framesPlayed: UInt64 { counters.pointee.framesPlayed.load(ordering: .relaxed) }
    public var framesStarved: UInt64 { counters.pointee.framesStarved.load(ordering: .relaxed) }
    /// NaN and ±∞ samples sent to the outputs as 0.
    public var nonFiniteReplaced: UInt64 { counters.pointee.nonFiniteReplaced.load(ordering: .relaxed) }
    /// Total frames once the reader has queued the last one; nil before (and when looping forever).
    public var framesTotal: UInt64? {
        let total = counters.pointee.framesTotal.load(ordering: .acquiring)
        return total == .max ? nil : total
    }
    public var isFinished: Bool { counters.pointee.isFinished.load(ordering: .acquiring) }
    /// Frames of the server's clock that micmon's output did not reach in time (it was late or
    /// stopped), at the playback positions of `missedGaps()`.
    public var framesMissed: UInt64 { counters.pointee.framesMissed.load(ordering: .relaxed) }
    public var missedGapCount: UInt64 { counters.pointee.missedGapCount.load(ordering: .relaxed) }
    /// PipeWire only: cycles micmon ran late (each one also in `framesMissed` or
    /// `framesUncertain`).
    public var lateCycles: UInt64 { counters.pointee.lateCycles.load(ordering: .relaxed) }
    /// PipeWire only: frames of cycles entered a period late, which may not have reached the
    /// outputs (see `PlaybackCounters.framesUncertain`), at the positions of `uncertainGaps()`.
    public var framesUncertain: UInt64 { counters.pointee.framesUncertain.load(ordering: .relaxed) }
    public var uncertainGapCount: UInt64 { counters.pointee.uncertainGapCount.load(ordering: .relaxed) }
    public var timelineJitter: UInt64 { counters.pointee.timelineJitter.load(ordering: .relaxed) }
    /// The first 1000 missed gaps (playback positions), as logged so far. Main thread.
    public func missedGaps() -> [DropEvent] {
        Self.drain(missedRing, into: &missedLog)
        return missedLog
    }
    /// The first 1000 uncertain gaps (playback positions), as logged so far. Main thread.
    public func uncertainGaps() -> [DropEvent] {
        Self.drain(uncertainRing, into: &uncertainLog)
        return uncertainLog
    }
    /// Moves what the kernel logged in `ring` to `log`, keeping the first 1000. Main thread.
    private static func drain(_ ring: SPSCRing<DropEvent>, into log: inout [DropEvent]) {
        let slices = ring.consumer.readableSlices()
        for gap in slices.first where log.count < 1000 { log.append(gap) }
        for gap in slices.second where log.count < 1000 { log.append(gap) }
        ring.consumer.commitRead(count: slices.count)
    }
    public var isPaused: Bool { counters.pointee.isPaused.load(ordering: .relaxed) }
    public var xruns: UInt64 { core.memory.xruns }
    public var serverIsGone: Bool { core.memory.serverIsGone }
    /// Whether the server's sample rate changed: playback stopped at the first cycle of the new
    /// rate (its conversion ratio was made for the old one).
    public var sampleRateChanged: Bool { core.memory.sampleRateChanged }
    /// The rate the server changed to, once `sampleRateChanged` (0 before).
    public var changedSampleRate: Int { core.memory.changedSampleRate }
    /// The cycle counter and server state for the wall-clock watchdog's thread; valid until
    /// `stop()`.
    public var cycleProbe: CycleProbe { CycleProbe(state: core.memory.state) }
    /// Lateness and execution time of the process callback so far. Main thread.
    public var callbackTiming: CallbackTimingSummary {
        core.memory.callbackStatistics.drain()
        return core.memory.timingSummary()
    }
    public var readerFailure: String? { reader.hasFailed.load(ordering: .acquiring) ? reader.failure : nil }

    /// Looks at the destinations: when one disappears, pauses (the callback plays silence and
    /// keeps its place); when all are back, reconnects and resumes. Returns what changed.
    /// Main thread, a few times a second.
    public func checkRoute() -> RouteEvent? {
        core.memory.callbackStatistics.drain()
        guard !destinations.isEmpty, !serverIsGone else { return nil }
        let missing = destinations.filter { !client.portExists($0) }
        if !missing.isEmpty && !isPaused {
            counters.pointee.isPaused.store(true, ordering: .relaxed)
            return .lost(missing)
        }
        if missing.isEmpty && isPaused {
            do { try connect() } catch { return nil }
            counters.pointee.isPaused.store(false, ordering: .relaxed)
            return .restored(destinations)
        }
        return nil
    }

    /// Stops the kernel (it plays silence from the next cycle), the reader and the client.
    /// Safe to call twice. Main thread.
    public func stop() {
        guard !isStopped else { return }
        isStopped = true
        core.stop()
        reader.stop()
        core.close()
    }
}
