import DSP
import Glibc
import Platform
import Jack
import Realtime
import SoundFile

/// What a capture session should do. Plain values, checked by the caller.
public struct CaptureConfiguration: Sendable {
    /// Where and how to record; nil meters only.
    public struct Recording: Sendable {
        public var path: String
        public var format: AudioFileFormat
        public init(path: String, format: AudioFileFormat) {
            self.path = path
            self.format = format
        }
    }

    public var clientName = "micmon"
    public var serverName: String?
    /// `-p` requests in order (exact names or patterns); empty means the first two physical
    /// capture ports.
    public var sourcePorts: [String] = []
    /// Inputs to register even when fewer sources are given (in_1, in_2).
    public var minimumChannelCount = 2
    public var recording: Recording?
    /// Stop after this many seconds (the take then holds exactly seconds × rate frames).
    public var durationSeconds: Double?
    /// Capacity of the capture ring, in seconds of audio.
    public var ringSeconds: Double = 4
    /// Monitoring: the inputs on `out_1`, `out_2` in the same cycle, or nil.
    public var monitor: Monitoring?
    /// Dual-mic noise suppression: in_1 is the primary mic, in_2 the reference. The clean
    /// channel is metered, monitored instead of the inputs, and recorded as `recordedChannels`
    /// says.
    public var denoises = false
    /// What the file holds when denoising: the inputs, the clean channel, or all (inputs, then
    /// clean). Ignored without `denoises`.
    public var recordedChannels: RecordedChannels = .all

    public enum RecordedChannels: String, Sendable, CaseIterable {
        case raw, clean, all
    }

    public struct Monitoring: Sendable {
        /// `-o` requests (exact names or patterns); empty means the first two physical
        /// playback ports.
        public var destinations: [String]
        public var gainDecibels: Double
        public init(destinations: [String] = [], gainDecibels: Double = 0) {
            self.destinations = destinations
            self.gainDecibels = gainDecibels
        }
    }

    public init() {}
}

/// Why a session could not start. The messages come from libjack / libsndfile.
public enum CaptureError: Error, CustomStringConvertible {
    case jack(JackError)
    case unknownPort(PortSelection.NoMatch)
    case file(SoundFileError)
    case denoise(NoiseSuppressorError)

    public var description: String {
        switch self {
        case .denoise(let error): return error.description
        case .jack(let error): return error.description
        case .unknownPort(let error): return error.description
        case .file(let error): return error.description
        }
    }
}

/// The end of a session, for the summary and the exit code.
public struct CaptureSummary: Sendable {
    public let sampleRate: Int
    public let channelNames: [String]
    public let sourcePorts: [String]
    /// Frames on the take's timeline (= frames in the file when recording).
    public let framesTaken: UInt64
    public let framesWritten: UInt64
    public let framesDropped: UInt64
    /// Gaps in the server's timeline (cycles it ran without micmon, on xruns) and the frames
    /// they span. Not drops: the take holds what the graph delivered, contiguous.
    public let serverGapCount: UInt64
    public let framesSkippedByServer: UInt64
    /// Where those gaps fall in the take (the first `CaptureSession.serverGapListLimit`).
    public let serverGaps: [DropEvent]
    public let drops: [DropEvent]
    public let xruns: UInt64
    public let readings: [MeterReading]
    public let fileError: SoundFileError?
    public let serverWasLost: Bool
    public let sampleRateChanged: Bool
    /// Lateness and execution time of the process callback over the session.
    public let callbackTiming: CallbackTimingSummary
}

/// A running capture: JACK client, realtime kernel, ring, writer thread and meters.
/// Create, `start()`, poll from the main thread, `stop()`. Main thread only.
public final class CaptureSession {
    public let client: JackClient
    public let sampleRate: Int
    public let channelNames: [String]
    /// The source port feeding each input ("" when an input has no source).
    public let sourcePorts: [String]
    /// Things the user should know that are not errors (e.g. fewer capture ports than inputs).
    public private(set) var warnings: [String] = []
    public var isRecording: Bool { writer != nil }
    /// Whether the noise suppressor runs (the last meter reading is then the clean channel).
    public var denoises: Bool { suppressor != nil }
    /// Where the monitor outputs go (out_1 first); empty without monitoring.
    public let monitorDestinations: [String]
    public let monitorPorts: [JackPort]

    private let ports: [JackPort]
    private let kernel: UnsafeMutablePointer<CaptureKernel>
    private let counters: UnsafeMutablePointer<CaptureCounters>
    private let portHandles: UnsafeMutablePointer<OpaquePointer>
    private let inputBuffers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let meters: UnsafeMutablePointer<ChannelMeter>
    private let mailbox: LatestValueMailbox<ChannelMeter>
    private let sampleRing: SPSCRing<Float>?
    private let dropRing: SPSCRing<DropEvent>?
    private let writer: TakeWriter?
    private let timingRing = SPSCRing<CycleTiming>(capacity: 16384)
    /// The realtime side's log of server gaps, drained on the main thread into `serverGapLog`.
    private let serverGapRing = SPSCRing<DropEvent>(capacity: 1024)
    private var serverGapLog: [DropEvent] = []
    /// How many server gaps the summary lists (all are counted), so memory stays flat.
    public static let serverGapListLimit = 1000
    private let monitorMemory: MonitorMemory?
    /// The noise suppressor and the clean channel's buffer (`CaptureKernel.maximumPeriod`), or nil.
    private let suppressor: NoiseSuppressor?
    private let cleanBuffer: UnsafeMutablePointer<Float>?
    private let routeWatch: RouteWatch
    /// Callback lateness and execution time, folded on the main thread (see `drainTimings()`).
    public let callbackStatistics: CallbackStatistics
    private var isStarted = false
    private var summary: CaptureSummary?

    /// Connects to the server, registers the inputs, resolves the sources, creates the file and
    /// prepares all realtime memory. Nothing runs until `start()`.
    public init(_ configuration: CaptureConfiguration) throws(CaptureError) {
        do {
            client = try JackClient(name: configuration.clientName, serverName: configuration.serverName)
        } catch {
            throw .jack(error)
        }
        sampleRate = client.sampleRate
        if configuration.denoises {
            do { suppressor = try NoiseSuppressor(sampleRate: sampleRate) } catch { throw .denoise(error) }
        } else {
            suppressor = nil
        }

        var sources: [String]
        if configuration.sourcePorts.isEmpty {
            let physical = client.portNames(direction: .output, physicalOnly: true)
            sources = Array(physical.prefix(configuration.minimumChannelCount))
            if sources.count < configuration.minimumChannelCount {
                warnings.append("found \(sources.count) physical capture port(s) for \(configuration.minimumChannelCount) inputs; the rest read silence (use -p to choose sources)")
            }
        } else {
            do {
                sources = try PortSelection.resolve(configuration.sourcePorts, outputPorts: client.portNames(direction: .output))
            } catch {
                throw .unknownPort(error)
            }
        }
        let channelCount = max(configuration.minimumChannelCount, sources.count)
        sources += Array(repeating: "", count: channelCount - sources.count)
        sourcePorts = sources

        var registered: [JackPort] = []
        for index in 1 ... channelCount {
            do { registered.append(try client.registerPort(name: "in_\(index)", direction: .input)) } catch { throw .jack(error) }
        }
        ports = registered
        // With denoising, one more meter (and maybe file channel): the clean primary.
        let meterCount = channelCount + (suppressor == nil ? 0 : 1)
        channelNames = registered.map(\.shortName) + (suppressor == nil ? [] : ["clean"])
        let recorded: (offset: Int, count: Int)
        switch suppressor == nil ? .raw : configuration.recordedChannels {
        case .raw: recorded = (0, channelCount)
        case .clean: recorded = (channelCount, 1)
        case .all: recorded = (0, channelCount + 1)
        }

        if let monitor = configuration.monitor {
            var chosen: [String]
            if monitor.destinations.isEmpty {
                chosen = Array(client.portNames(direction: .input, physicalOnly: true).prefix(2))
            } else {
                do {
                    chosen = try PortSelection.resolve(monitor.destinations, among: client.portNames(direction: .input), kind: "input")
                } catch {
                    throw .unknownPort(error)
                }
            }
            var outputs: [JackPort] = []
            for index in 1 ... 2 {
                do { outputs.append(try client.registerPort(name: "out_\(index)", direction: .output)) } catch { throw .jack(error) }
            }
            monitorPorts = outputs
            monitorDestinations = Array(chosen.prefix(2))
            let gain = Float(Decibels.gain(decibels: monitor.gainDecibels))
            monitorMemory = MonitorMemory(ports: outputs.map(\.handle), gain: gain)
        } else {
            monitorPorts = []
            monitorDestinations = []
            monitorMemory = nil
        }

        var fileWriter: SoundFileWriter?
        if let recording = configuration.recording {
            do {
                fileWriter = try SoundFileWriter(path: recording.path, format: recording.format,
                                                 sampleRate: sampleRate, channelCount: recorded.count)
            } catch {
                throw .file(error)
            }
        }

        counters = .allocate(capacity: 1)
        counters.initialize(to: CaptureCounters())
        portHandles = .allocate(capacity: channelCount)
        portHandles.initialize(from: registered.map(\.handle), count: channelCount)
        // The inputs, then (when denoising) the clean channel, which stays in place.
        inputBuffers = .allocate(capacity: meterCount)
        meters = .allocate(capacity: meterCount)
        meters.initialize(repeating: ChannelMeter(), count: meterCount)
        mailbox = LatestValueMailbox(count: meterCount, initial: ChannelMeter())
        // A silent buffer stands in for the inputs until the first cycle.
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: 1)
        silence.initialize(to: 0)
        inputBuffers.initialize(repeating: UnsafePointer(silence), count: channelCount)
        if suppressor != nil {
            let clean = UnsafeMutablePointer<Float>.allocate(capacity: CaptureKernel.maximumPeriod)
            clean.initialize(repeating: 0, count: CaptureKernel.maximumPeriod)
            (inputBuffers + channelCount).initialize(to: UnsafePointer(clean))
            cleanBuffer = clean
        } else {
            cleanBuffer = nil
        }

        if let fileWriter {
            let ringFrames = max(Int(configuration.ringSeconds * Double(sampleRate)), 8192)
            let samples = SPSCRing<Float>(capacity: ringFrames * recorded.count)
            let drops = SPSCRing<DropEvent>(capacity: 1024)
            sampleRing = samples
            dropRing = drops
            let stall = getenv("MICMON_TEST_WRITER_STALL_SECONDS").flatMap { Double(String(cString: $0)) } ?? 0
            writer = TakeWriter(file: fileWriter, samples: samples.consumer, drops: drops.consumer,
                                counters: counters, channelCount: recorded.count, stallSeconds: stall)
        } else {
            sampleRing = nil
            dropRing = nil
            writer = nil
        }
        let rate = Double(client.sampleRate)
        let frameLimit = configuration.durationSeconds.map { UInt64(($0 * rate).rounded()) } ?? .max

        callbackStatistics = CallbackStatistics(timings: timingRing.consumer)
        routeWatch = RouteWatch(client: client, ports: registered, sources: sources)
        let samplesProducer = sampleRing?.producer
        let dropsProducer = dropRing?.producer
        kernel = .allocate(capacity: 1)
        kernel.initialize(to: CaptureKernel(
            channelCount: channelCount, ports: portHandles, inputs: inputBuffers, meters: meters,
            meterCoefficients: MeterCoefficients(sampleRate: Double(sampleRate)),
            meterMailbox: mailbox.writer, samples: samplesProducer, drops: dropsProducer,
            serverGaps: serverGapRing.producer, counters: counters, client: client.handle, timings: timingRing.producer, frameLimit: max(frameLimit, 1),
            routeChanges: routeWatch.changes.producer, monitor: monitorMemory?.route,
            meterCount: meterCount, recordSources: inputBuffers + recorded.offset, recordedChannelCount: recorded.count,
            suppressor: suppressor?.kernelPointer))
        kernel.pointee.plantsAllocation = getenv("MICMON_TEST_PLANT_RT_ALLOCATION").map { String(cString: $0) == "1" } ?? false
        kernel.pointee.readsSystemClock = JackClock.systemClockIsJackClock()

        let context = UnsafeMutableRawPointer(kernel)
        do {
            try client.setProcessCallback(captureProcess, context: context)
            try client.setXrunCallback(captureXrun, context: context)
            try client.setBufferSizeCallback(captureBufferSize, context: context)
            try client.setSampleRateCallback(captureSampleRate, context: context)
            try client.setThreadInitCallback(captureThreadInit, context: context)
            try client.setPortRegistrationCallback(capturePortRegistration, context: context)
            try client.setPortConnectCallback(capturePortConnect, context: context)
        } catch {
            throw .jack(error)
        }
        client.setShutdownCallback(captureShutdown, context: context)
    }

    deinit {
        if isStarted && summary == nil { _ = stop() }
        close()
        kernel.deinitialize(count: 1)
        kernel.deallocate()
        // The first input buffer may still be the placeholder; it is one float, leaked never.
        inputBuffers.deallocate()
        cleanBuffer?.deallocate()
        portHandles.deallocate()
        meters.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    /// Starts the writer, activates the client and connects the sources. Main thread.
    public func start() throws(CaptureError) {
        writer?.start()
        isStarted = true
        do {
            try client.activate()
            for (source, port) in zip(sourcePorts, ports) where !source.isEmpty {
                try client.connect(source: source, destination: port.fullName)
            }
            for (port, destination) in zip(monitorPorts, monitorDestinations) {
                try client.connect(source: port.fullName, destination: destination)
            }
            counters.pointee.isArmed.store(true, ordering: .relaxed)
        } catch {
            throw .jack(error)
        }
    }

    /// Route changes since the last call: sources gone, back (reconnected), or connections
    /// changed by someone else. Main thread, a few times a second.
    public func pollRoute() -> [RouteChange] {
        routeWatch.poll(takeSeconds: Double(framesTaken) / Double(sampleRate))
    }

    /// Whether each input has a connection now (as of the last `pollRoute()`).
    public var inputIsConnected: [Bool] { routeWatch.isConnected }

    /// Folds the queued cycle timings into `callbackStatistics`, and takes the server gaps
    /// noted since. Main thread, a few times a second.
    public func drainTimings() {
        callbackStatistics.drain()
        drainServerGaps()
    }

    private func drainServerGaps() {
        let consumer = serverGapRing.consumer
        let slices = consumer.readableSlices()
        guard slices.count > 0 else { return }
        for gap in slices.first where serverGapLog.count < Self.serverGapListLimit { serverGapLog.append(gap) }
        for gap in slices.second where serverGapLog.count < Self.serverGapListLimit { serverGapLog.append(gap) }
        consumer.commitRead(count: slices.count)
    }

    /// The latest monitor output meters (out_1, out_2); empty without monitoring. Main thread.
    public func monitorReadings() -> [MeterReading] {
        monitorMemory.map { $0.mailbox.readLatest().0.map(\.reading) } ?? []
    }

    /// The latest meter readings, one per input. Main thread.
    public func readings() -> [MeterReading] {
        Array(mailbox.readLatest().0.map(\.reading))
    }

    public var framesTaken: UInt64 { counters.pointee.framesTaken.load(ordering: .acquiring) }
    public var framesDropped: UInt64 { counters.pointee.framesDropped.load(ordering: .relaxed) }
    public var xruns: UInt64 { counters.pointee.xruns.load(ordering: .relaxed) }
    public var periodFrames: Int { Int(counters.pointee.periodFrames.load(ordering: .relaxed)) }
    /// The frames asked for with a duration have all been taken.
    public var isComplete: Bool { counters.pointee.isComplete.load(ordering: .acquiring) }
    public var serverIsGone: Bool { counters.pointee.serverIsGone.load(ordering: .acquiring) }
    public var sampleRateChanged: Bool { counters.pointee.sampleRateChanged.load(ordering: .acquiring) }
    public var fileHasFailed: Bool { writer?.hasFailed.load(ordering: .acquiring) ?? false }

    /// Ends the take: the realtime side stops queueing, the writer drains and finalizes the
    /// file, and the counters are summed up. The client stays open until `close()`, so a JACK
    /// server that is slow to let go never holds up the file. Safe to call twice. Main thread.
    public func stop() -> CaptureSummary {
        if let summary { return summary }
        let serverLost = serverIsGone
        counters.pointee.stopRequested.store(true, ordering: .releasing)
        if isStarted && !serverLost && !waitForRealtimeStop(timeout: 1.0) {
            // No cycle ran to see the request (a stalled server): stop the callbacks outright.
            client.deactivate()
        }
        let written = writer?.finish()
        drainTimings()
        let final = CaptureSummary(
            sampleRate: sampleRate, channelNames: channelNames, sourcePorts: sourcePorts,
            framesTaken: framesTaken, framesWritten: written?.framesWritten ?? 0,
            framesDropped: framesDropped, serverGapCount: counters.pointee.serverGaps.load(ordering: .relaxed),
            framesSkippedByServer: counters.pointee.framesSkippedByServer.load(ordering: .relaxed), serverGaps: serverGapLog,
            drops: written?.drops ?? [], xruns: xruns,
            readings: readings(), fileError: written?.failure, serverWasLost: serverLost || serverIsGone,
            sampleRateChanged: sampleRateChanged,
            callbackTiming: callbackStatistics.summary(cyclesMissed: counters.pointee.timingsMissed.load(ordering: .relaxed)))
        summary = final
        return final
    }

    /// Deactivates and closes the JACK client (after `stop()`). Main thread.
    public func close() {
        if !serverIsGone { client.deactivate() }
        client.close()
    }

    /// Waits until the realtime thread confirms it stopped taking frames, or the server is gone.
    private func waitForRealtimeStop(timeout: Double) -> Bool {
        waitPolling(timeout: timeout, until: { counters.pointee.hasStopped.load(ordering: .acquiring) }, givingUpIf: { serverIsGone })
    }
}

/// The memory behind a `MonitorRoute`: prepared before activation, freed with the session.
final class MonitorMemory {
    let ports: UnsafeMutablePointer<OpaquePointer>
    let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let meters: UnsafeMutablePointer<ChannelMeter>
    let mailbox: LatestValueMailbox<ChannelMeter>
    let placeholder: UnsafeMutablePointer<Float>
    let route: MonitorRoute

    init(ports handles: [OpaquePointer], gain: Float) {
        let count = handles.count
        ports = .allocate(capacity: count)
        ports.initialize(from: handles, count: count)
        placeholder = .allocate(capacity: 1)
        outputs = .allocate(capacity: count)
        outputs.initialize(repeating: placeholder, count: count)
        meters = .allocate(capacity: count)
        meters.initialize(repeating: ChannelMeter(), count: count)
        mailbox = LatestValueMailbox(count: count, initial: ChannelMeter())
        route = MonitorRoute(count: count, ports: ports, outputs: outputs, gain: gain, meters: meters, meterMailbox: mailbox.writer)
    }

    deinit {
        ports.deallocate()
        outputs.deallocate()
        placeholder.deallocate()
        meters.deallocate()
    }
}
