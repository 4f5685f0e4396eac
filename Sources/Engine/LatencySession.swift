// A latency session (`micmon latency`): the session core with the latency kernel plugged in, the
// delay estimator, and the report's figures. Its configuration, errors and summary types. Main
// thread only.

import DSP
import Jack
import Platform
import Realtime

/// What a latency session should do. Plain values, checked by the caller.
public struct LatencyConfiguration: Sendable {
    public var clientName = "micmon"
    public var serverName: String?
    /// `--send`: the input port out_1 feeds (exact name or pattern).
    public var sendPort: String?
    /// `--return`: the output port that feeds in_1 (exact name or pattern).
    public var returnPort: String?
    /// `--software-loop`: out_1 straight into in_1.
    public var softwareLoop = false
    /// How long to measure, from the first measurement cycle.
    public var durationSeconds: Double = 5
    /// Peak amplitude of the measurement signal.
    public var signalAmplitude: Float = 0.5
    /// The longest round trip looked for, in seconds.
    public var maximumDelaySeconds: Double = 2

    /// Whether a round trip is measured (any loop option); else only callback timing.
    public var measuresRoundTrip: Bool { softwareLoop || sendPort != nil || returnPort != nil }

    public init() {}
}

/// Why a latency session could not start.
public enum LatencyError: Error, CustomStringConvertible {
    case jack(JackError)
    /// A `--send`/`--return` port that does not exist or points the wrong way (a usage error).
    case badPort(String)

    public var description: String {
        switch self {
        case .jack(let error): return error.description
        case .badPort(let message): return message
        }
    }
}

/// The round-trip part of a latency summary.
public struct RoundTripResult: Sendable {
    public enum Status: String, Sendable {
        /// At least one valid estimate.
        case measured
        /// Nothing came back on in_1 (silence).
        case silence
        /// Something came back, but not the measurement signal (noise, another source).
        case noSignal = "no signal"
        /// The signal came back but its onset lay beyond the maximum measurable delay (or the
        /// loop was closed after the measurement started).
        case beyondRange = "beyond range"
        /// The run ended before a first estimate (too short, or no full window yet).
        case notLocked = "not locked"
        /// out_1 or in_1 was never connected (a loop left to be closed by hand), so no signal
        /// was emitted.
        case notConnected = "not connected"
        /// `--software-loop` on PipeWire's JACK, which passes silence through a link from a
        /// client to itself: the loop was connected, the server cannot carry it.
        case silentSelfLink = "silent self-link"
    }

    /// "software loop", or "external" for --send/--return.
    public var route: String
    /// Where out_1 went and where in_1 came from (full port names; "" when not connected by micmon).
    public var sendPort: String
    public var returnPort: String
    public var status: Status
    /// Estimates over the run (one per signal period after lock).
    public var estimates: Int
    public var minimumFrames: Double?
    public var meanFrames: Double?
    public var maximumFrames: Double?
    /// From the first emitted sample to the first valid estimate, on JACK's clock.
    public var lockMilliseconds: Double?
    /// Frames of return the first estimate needed (the part of the lock time set by the data).
    public var lockFrames: Int?
    public var isInverted: Bool?
    /// The lowest peak-to-noise ratio of the estimates, in dB.
    public var peakToNoiseDecibels: Double?
    /// The return's level relative to the emitted signal, in dB (mean over the estimates).
    public var returnLevelDecibels: Double?
    /// Windows after lock in which the signal was missing (dropouts).
    public var windowsWithoutSignal: Int
    /// Returned frames lost because the main thread fell behind (skipped, not measured).
    public var framesLost: UInt64
    /// JACK's reported latencies: playback latency of the send side, capture latency of the
    /// return side, and the ports they were read from.
    public var playbackLatency: JackLatencyRange?
    public var playbackLatencyPort: String
    public var captureLatency: JackLatencyRange?
    public var captureLatencyPort: String
    /// The longest round trip that can be measured, in frames.
    public var maximumDelayFrames: Int
    public var signalPeriodFrames: Int

    /// What JACK accounts for: playback max + capture max (as jack_iodelay adds them).
    public var jackReportedFrames: Int? {
        guard let playbackLatency, let captureLatency else { return nil }
        return playbackLatency.max + captureLatency.max
    }

    /// The measured mean minus what JACK reports.
    public var unaccountedFrames: Double? {
        guard let meanFrames, let jackReportedFrames else { return nil }
        return meanFrames - Double(jackReportedFrames)
    }
}

/// The end of a latency session.
public struct LatencySummary: Sendable {
    public var serverName: String
    public var clientName: String
    public var sampleRate: Int
    /// The server's period at the end, in frames.
    public var periodFrames: Int
    /// How long the measurement ran (frames / rate).
    public var seconds: Double
    public var callbackTiming: CallbackTimingSummary
    /// The raw histograms (1 µs bins) behind the percentiles.
    public var lateness: Histogram
    public var execution: Histogram
    /// The server's DSP load (`jack_cpu_load`), sampled on the main thread, in percent.
    public var serverLoadMean: Double
    public var serverLoadMax: Double
    public var xruns: UInt64
    /// Seconds after the start of the measurement at which each xrun was reported (an xrun before
    /// the first cycle counts from the activation).
    public var xrunTimes: [Double]
    /// Cycles whose lateness + execution exceeded the period, in seconds after the start.
    /// When late cycles happened (the first `CallbackStatistics.overrunListLimit`).
    public var lateCycleTimes: [Double]
    /// How many late cycles there were in all.
    public var lateCycleCount: UInt64 = 0
    public var roundTrip: RoundTripResult?
    public var serverWasLost: Bool
}

/// A running latency measurement: JACK client with out_1/in_1, realtime kernel, rings, the
/// delay estimator and the callback statistics. Create, `start()`, `poll()` from the main
/// thread, `stop()`, `close()`. Main thread only.
public final class LatencySession {
    public var client: JackClient { core.client }
    public let sampleRate: Int
    public let configuration: LatencyConfiguration
    public let outputPort: JackPort
    public let inputPort: JackPort
    /// The resolved `--send` and `--return` ports (full names), if any.
    public let sendTarget: String?
    public let returnSource: String?
    public let signal: MeasurementSignal
    /// Things the user should know that are not errors.
    public private(set) var warnings: [String] = []

    private let core: JackSession<LatencyKernel>
    private let counters: UnsafeMutablePointer<LatencyCounters>
    private let returnRing: SPSCRing<Float>
    private let gapRing = SPSCRing<DropEvent>(capacity: 256)
    /// Callback lateness and execution time, folded on the main thread.
    public var callbackStatistics: CallbackStatistics { core.memory.callbackStatistics }
    private let estimator: DelayEstimator?
    private var connections: [(source: String, destination: String)] = []
    private var isStarted: Bool { core.isStarted }
    private var startUsecs: UInt64 = 0
    private var summary: LatencySummary?

    /// The return timeline consumed so far (samples read + gaps skipped).
    private var returnPosition: UInt64 = 0
    private var estimates: [DelayMeasurement] = []
    private var estimateSum = 0.0
    private var gainSum = 0.0
    private var lowestPeakToNoise = Double.infinity
    private var invertedEstimates = 0
    /// Now − first measurement cycle, when the first estimate arrived.
    public private(set) var lockMilliseconds: Double?
    private var loadSum = 0.0
    private var loadMax = 0.0
    private var loadSamples = 0
    private var xrunTimesUsecs: [UInt64] = []

    /// Connects to the server, checks the ports, registers out_1 and in_1 and prepares all
    /// realtime memory. Nothing runs until `start()`.
    public init(_ configuration: LatencyConfiguration) throws(LatencyError) {
        self.configuration = configuration
        do {
            core = try JackSession(clientName: configuration.clientName, serverName: configuration.serverName)
        } catch {
            throw .jack(error)
        }
        sampleRate = core.sampleRate
        let catalog = core.portCatalog()
        sendTarget = try configuration.sendPort.map { (request) throws(LatencyError) in
            try LatencySession.resolvePort(request, option: "--send", wanted: .input, in: catalog)
        }
        returnSource = try configuration.returnPort.map { (request) throws(LatencyError) in
            try LatencySession.resolvePort(request, option: "--return", wanted: .output, in: catalog)
        }
        do {
            outputPort = try core.client.registerPort(name: "out_1", direction: .output)
            inputPort = try core.client.registerPort(name: "in_1", direction: .input)
        } catch {
            throw .jack(error)
        }
        if configuration.softwareLoop && JackClient.isPipeWire {
            warnings.append(
                "this is PipeWire's JACK (\(JackClient.libraryVersion)), which passes silence through a link from "
                    + "a client to itself: measure through a node with --send and --return instead")
        }
        if configuration.measuresRoundTrip && !configuration.softwareLoop {
            let wait = "the signal starts once both ends are connected"
            if sendTarget == nil {
                warnings.append("no --send: connect \(outputPort.fullName) to the loop by hand; \(wait)")
            }
            if returnSource == nil {
                warnings.append("no --return: connect the loop to \(inputPort.fullName) by hand; \(wait)")
            }
        }

        signal = MeasurementSignal(amplitude: configuration.signalAmplitude)
        let rate = Double(sampleRate)
        returnRing = SPSCRing<Float>(capacity: max(Int(4 * rate), 1 << 16))
        estimator =
            configuration.measuresRoundTrip
            ? DelayEstimator(signal: signal, maximumDelayFrames: Int(configuration.maximumDelaySeconds * rate))
            : nil
        let memory = core.memory
        memory.keep(returnRing)
        memory.keep(gapRing)
        counters = memory.make(LatencyCounters())
        // A silent buffer stands in for the ports until the first cycle fetches them.
        let placeholder = memory.make(repeating: Float(0), count: 1)
        var kernel = LatencyKernel(
            link: core.link, outputPort: outputPort.handle, inputPort: inputPort.handle, output: placeholder,
            input: UnsafePointer(placeholder), signal: UnsafePointer(memory.make(copying: signal.samples)),
            signalPeriod: signal.period, measures: configuration.measuresRoundTrip,
            returns: returnRing.producer, gaps: gapRing.producer, counters: counters)
        if JackClient.isPipeWire {
            kernel.lateRepeatIsRead = true
            // Before activation PipeWire's libjack hands the input its own silent buffer: the one a
            // cycle gets when no period reached the port (docs/platforms.md).
            kernel.idleInput = JackPortBuffer.idleBuffer(inputPort.handle, frames: UInt32(CaptureKernel.maximumPeriod))
        }
        do { try core.install(kernel, process: latencyProcess) } catch { throw .jack(error) }
    }

    deinit {
        if isStarted && summary == nil { _ = stop() }
    }

    /// Resolves a `--send` (wanted: an input port) or `--return` (an output port) request through
    /// the one resolver (`PortSelection.first`): an exact name, or a pattern (`*`, `?`, `[`) whose
    /// first match in libjack's order is taken. A missing port or one that points the wrong way
    /// is a usage error with a one-line reason.
    public static func resolvePort(
        _ request: String, option: String, wanted: PortDirection,
        in catalog: PortSelection.Catalog
    ) throws(LatencyError) -> String {
        do {
            return try PortSelection.first(request, wanted: wanted, in: catalog)
        } catch {
            switch error {
            case .wrongDirection(let wrong):
                let kind =
                    wanted == .input
                    ? "an input port (a destination such as system:playback_1)"
                    : "an output port (a source such as system:capture_1)"
                throw .badPort(
                    "\(option) needs \(kind); '\(wrong)' is an \(wanted == .input ? "output" : "input") port")
            case .none(let candidates):
                let list = candidates.isEmpty ? "(none)" : candidates.joined(separator: ", ")
                throw .badPort(
                    "\(option): no JACK port named '\(request)'; \(wanted == .input ? "input" : "output") ports: \(list)"
                )
            }
        }
    }

    /// `resolvePort(_:option:wanted:in:)` over two lists of port names.
    public static func resolvePort(
        _ request: String, option: String, wanted: PortDirection,
        inputPorts: [String], outputPorts: [String]
    ) throws(LatencyError) -> String {
        try resolvePort(
            request, option: option, wanted: wanted, in: PortSelection.Catalog(inputs: inputPorts, outputs: outputPorts)
        )
    }

    /// Activates the client, makes the connections and arms the measurement. Main thread.
    public func start() throws(LatencyError) {
        startUsecs = JackClock.now()
        do {
            try core.activate()
            var wanted: [(String, String)] = []
            if configuration.softwareLoop { wanted.append((outputPort.fullName, inputPort.fullName)) }
            if let sendTarget { wanted.append((outputPort.fullName, sendTarget)) }
            if let returnSource { wanted.append((returnSource, inputPort.fullName)) }
            for (source, destination) in wanted {
                try client.connect(source: source, destination: destination)
                connections.append((source, destination))
            }
        } catch {
            throw .jack(error)
        }
        if configuration.softwareLoop || (sendTarget != nil && returnSource != nil) { armEmission() }
        counters.pointee.isArmed.store(true, ordering: .releasing)
    }

    /// Whether the signal has been released (the loop is closed at both ends).
    public private(set) var emissionIsArmed = false

    private func armEmission() {
        emissionIsArmed = true
        counters.pointee.emissionArmed.store(true, ordering: .releasing)
    }

    /// A loop closed by hand: the signal starts only once out_1 and in_1 both have a connection,
    /// so that the returned onset is the round trip (not the moment of connecting).
    private func armEmissionWhenConnected() {
        guard isStarted, !emissionIsArmed, estimator != nil, !serverIsGone,
            !core.memory.state.pointee.stopRequested.load(ordering: .relaxed)
        else { return }
        if !client.connections(of: outputPort).isEmpty && !client.connections(of: inputPort).isEmpty { armEmission() }
    }

    public var framesRun: UInt64 { counters.pointee.framesRun.load(ordering: .acquiring) }
    public var secondsRun: Double { Double(framesRun) / Double(sampleRate) }
    public var isComplete: Bool { secondsRun >= configuration.durationSeconds }
    public var serverIsGone: Bool { core.memory.serverIsGone }
    /// The cycle counter and server state for the wall-clock watchdog's thread; valid until
    /// `stop()`.
    public var cycleProbe: CycleProbe { CycleProbe(state: core.memory.state) }
    public var periodFrames: Int { core.memory.periodFrames }
    /// The estimator's view right now (nil without a round trip).
    public var roundTripState: DelayEstimator.State? { estimator?.state }
    /// The latest estimate, if any.
    public var latestEstimate: DelayMeasurement? { estimates.last }

    /// Folds in what the realtime side queued: cycle timings, xrun times, the return (through
    /// the estimator); samples the server's load. Main thread, every few tens of ms.
    public func poll() {
        callbackStatistics.drain()
        xrunTimesUsecs += core.memory.drainXrunTimes()
        if isStarted && !serverIsGone {
            let load = Double(client.cpuLoad)
            loadSum += load
            loadMax = max(loadMax, load)
            loadSamples += 1
        }
        armEmissionWhenConnected()
        if let estimator { drainReturn(into: estimator) }
    }

    /// Feeds the returned samples to the estimator in timeline order, skipping the gaps the
    /// realtime side reported, each with the period before it: on PipeWire a cycle woken late
    /// reads the next period's return early and is then called again with nothing (the gap), so
    /// the period before such a gap may hold the wrong period's samples (docs/platforms.md). So
    /// the last period read is held back until what follows it is known.
    private func drainReturn(into estimator: DelayEstimator) {
        let samples = returnRing.consumer
        let gaps = gapRing.consumer
        let suspectFrames = UInt64(max(periodFrames, 0))
        // The sample count first: every gap before those samples was committed before them.
        var remaining = UInt64(samples.availableToRead())
        while true {
            if let slot = gaps.readableSlices(count: 1) {
                let gap = slot.first[0]
                let before = gap.startFrame - returnPosition
                if before <= remaining && gap.frameCount == 0 {
                    // A disturbance of the signal sent (`LatencyKernel.noteDisturbance`), often
                    // followed by a gap at the same place: the period before it is still held.
                    let fed = before - min(before, suspectFrames)
                    feed(Int(fed), from: samples, to: estimator)
                    remaining -= fed
                    estimator.markDisturbance(atEmittedFrame: Int(gap.startFrame), margin: 2 * periodFrames)
                    gaps.commitRead(count: 1)
                    continue
                }
                if before <= remaining {
                    let suspect = min(before, suspectFrames)
                    feed(Int(before - suspect), from: samples, to: estimator)
                    discard(Int(suspect), from: samples)
                    remaining -= before
                    take(estimator.skip(frames: Int(suspect + gap.frameCount)))
                    returnPosition += gap.frameCount
                    gaps.commitRead(count: 1)
                    continue
                }
            }
            feed(Int(remaining - min(remaining, suspectFrames)), from: samples, to: estimator)
            return
        }
    }

    /// Drops `count` returned samples unread, for the estimator to skip. Main thread.
    private func discard(_ count: Int, from samples: SPSCRing<Float>.Consumer) {
        guard count > 0 else { return }
        samples.commitRead(count: count)
        returnPosition += UInt64(count)
    }

    private func feed(_ count: Int, from samples: SPSCRing<Float>.Consumer, to estimator: DelayEstimator) {
        guard count > 0, let slices = samples.readableSlices(count: count) else { return }
        take(estimator.append(slices.first))
        take(estimator.append(slices.second))
        samples.commitRead(count: count)
        returnPosition += UInt64(count)
    }

    private func take(_ found: [DelayMeasurement]) {
        guard !found.isEmpty else { return }
        if lockMilliseconds == nil {
            let first = counters.pointee.firstCycleUsecs.load(ordering: .relaxed)
            let now = JackClock.now()
            lockMilliseconds = now > first ? Double(now - first) / 1000 : 0
        }
        for estimate in found {
            estimates.append(estimate)
            estimateSum += estimate.delayFrames
            gainSum += estimate.gainDecibels
            lowestPeakToNoise = min(lowestPeakToNoise, estimate.peakToNoiseDecibels)
            if estimate.isInverted { invertedEstimates += 1 }
        }
    }

    /// Ends the measurement: the realtime side goes silent, everything queued is folded in,
    /// JACK's port latencies are read, and the connections micmon made are undone. Safe to call
    /// twice. Main thread.
    public func stop() -> LatencySummary {
        if let summary { return summary }
        let serverLost = serverIsGone
        core.stop()
        poll()
        var roundTrip: RoundTripResult?
        if let estimator {
            let playbackPort = sendTarget ?? outputPort.fullName
            let capturePort = returnSource ?? inputPort.fullName
            var status: RoundTripResult.Status
            switch estimator.state {
            case .locked: status = .measured
            case .silence:
                // PipeWire's JACK connects out_1 to in_1 but passes silence through a client's
                // link to itself (jack_iodelay's too): say so rather than ask about the loop.
                status = configuration.softwareLoop && JackClient.isPipeWire ? .silentSelfLink : .silence
            case .noSignal: status = .noSignal
            case .beyondRange: status = .beyondRange
            case .waiting, .arriving: status = .notLocked
            }
            if !emissionIsArmed { status = .notConnected }
            let count = estimates.count
            let delays = estimates.map(\.delayFrames)
            roundTrip = RoundTripResult(
                route: configuration.softwareLoop ? "software loop" : "external",
                sendPort: configuration.softwareLoop ? inputPort.fullName : (sendTarget ?? ""),
                returnPort: configuration.softwareLoop ? outputPort.fullName : (returnSource ?? ""),
                status: status, estimates: count,
                minimumFrames: delays.min(), meanFrames: count > 0 ? estimateSum / Double(count) : nil,
                maximumFrames: delays.max(),
                lockMilliseconds: lockMilliseconds, lockFrames: estimator.lockFrame,
                isInverted: count > 0 ? invertedEstimates * 2 > count : nil,
                peakToNoiseDecibels: count > 0 ? lowestPeakToNoise : nil,
                returnLevelDecibels: count > 0 ? gainSum / Double(count) : nil,
                windowsWithoutSignal: estimator.windowsWithoutSignal,
                framesLost: counters.pointee.returnFramesLost.load(ordering: .relaxed),
                playbackLatency: serverLost ? nil : client.latencyRange(ofPort: playbackPort, mode: .playback),
                playbackLatencyPort: playbackPort,
                captureLatency: serverLost ? nil : client.latencyRange(ofPort: capturePort, mode: .capture),
                captureLatencyPort: capturePort,
                maximumDelayFrames: estimator.maximumDelayFrames, signalPeriodFrames: signal.period)
        }
        if !serverIsGone {
            for connection in connections {
                client.disconnect(source: connection.source, destination: connection.destination)
            }
        }
        connections = []
        let first = counters.pointee.firstCycleUsecs.load(ordering: .relaxed)
        let origin = first > 0 ? first : startUsecs
        func seconds(_ usecs: UInt64) -> Double {
            usecs >= origin ? Double(usecs - origin) / 1e6 : -Double(origin - usecs) / 1e6
        }
        let timing = core.memory.timingSummary()
        var final = LatencySummary(
            serverName: client.serverName, clientName: configuration.clientName, sampleRate: sampleRate,
            periodFrames: timing.periodFrames > 0 ? timing.periodFrames : periodFrames,
            seconds: secondsRun, callbackTiming: timing,
            lateness: callbackStatistics.lateness, execution: callbackStatistics.execution,
            serverLoadMean: loadSamples > 0 ? loadSum / Double(loadSamples) : 0, serverLoadMax: loadMax,
            xruns: core.memory.xruns, xrunTimes: xrunTimesUsecs.map(seconds),
            lateCycleTimes: callbackStatistics.overrunCycleStarts.map(seconds),
            roundTrip: roundTrip, serverWasLost: serverLost || serverIsGone)
        final.lateCycleCount = callbackStatistics.overrunCount
        summary = final
        return final
    }

    /// Deactivates and closes the JACK client (after `stop()`). Main thread.
    public func close() {
        core.close()
    }
}
