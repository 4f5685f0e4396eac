// The plain values `micmon latency` reports: timing percentiles, the round trip, the estimator's
// state. Made by the CLI from Engine's results, rendered by LatencyReport. Any thread.

import DSP

/// Percentiles of a callback time over a session, in µs.
public struct TimingPercentiles: Sendable, Equatable {
    public var p50, p90, p99, p999, max, mean: Double

    public init(p50: Double, p90: Double, p99: Double, p999: Double, max: Double, mean: Double) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.mean = mean
    }
}

/// The process callback's timing over a latency run.
public struct CallbackTimingFigures: Sendable, Equatable {
    public var cycles: UInt64
    public var lateness: TimingPercentiles
    public var execution: TimingPercentiles
    public var periodUsecs: Double
    /// Cycles the statistics missed (their ring was full).
    public var cyclesMissed: UInt64
    /// micmon's own DSP load: mean execution time / period, in percent.
    public var dspLoadPercent: Double { periodUsecs > 0 ? execution.mean / periodUsecs * 100 : 0 }

    public init(
        cycles: UInt64, lateness: TimingPercentiles, execution: TimingPercentiles, periodUsecs: Double,
        cyclesMissed: UInt64
    ) {
        self.cycles = cycles
        self.lateness = lateness
        self.execution = execution
        self.periodUsecs = periodUsecs
        self.cyclesMissed = cyclesMissed
    }
}

/// A port latency range as JACK reports it, in frames.
public struct PortLatency: Sendable, Equatable {
    public var min: Int
    public var max: Int

    public init(min: Int, max: Int) {
        self.min = min
        self.max = max
    }
}

/// The round trip through a loop, as measured.
public struct RoundTripFigures: Sendable, Equatable {
    /// What came of the measurement; the raw values are the JSON `"status"`.
    public enum Status: String, Sendable {
        case measured
        case silence
        case noSignal = "no signal"
        case beyondRange = "beyond range"
        case notLocked = "not locked"
        case notConnected = "not connected"
        case silentSelfLink = "silent self-link"
    }

    /// "software loop", or "external" for --send/--return.
    public var route: String
    /// Full port names; "" when micmon did not connect that side.
    public var sendPort: String
    public var returnPort: String
    public var status: Status
    public var estimates: Int
    public var minimumFrames: Double?
    public var meanFrames: Double?
    public var maximumFrames: Double?
    public var lockMilliseconds: Double?
    public var lockFrames: Int?
    public var isInverted: Bool?
    public var peakToNoiseDecibels: Double?
    public var returnLevelDecibels: Double?
    public var windowsWithoutSignal: Int
    public var framesLost: UInt64
    public var playbackLatency: PortLatency?
    public var playbackLatencyPort: String
    public var captureLatency: PortLatency?
    public var captureLatencyPort: String
    public var maximumDelayFrames: Int
    public var signalPeriodFrames: Int

    public init(
        route: String, sendPort: String, returnPort: String, status: Status, estimates: Int = 0,
        minimumFrames: Double? = nil, meanFrames: Double? = nil, maximumFrames: Double? = nil,
        lockMilliseconds: Double? = nil, lockFrames: Int? = nil, isInverted: Bool? = nil,
        peakToNoiseDecibels: Double? = nil, returnLevelDecibels: Double? = nil, windowsWithoutSignal: Int = 0,
        framesLost: UInt64 = 0, playbackLatency: PortLatency? = nil, playbackLatencyPort: String = "",
        captureLatency: PortLatency? = nil, captureLatencyPort: String = "", maximumDelayFrames: Int,
        signalPeriodFrames: Int
    ) {
        self.route = route
        self.sendPort = sendPort
        self.returnPort = returnPort
        self.status = status
        self.estimates = estimates
        self.minimumFrames = minimumFrames
        self.meanFrames = meanFrames
        self.maximumFrames = maximumFrames
        self.lockMilliseconds = lockMilliseconds
        self.lockFrames = lockFrames
        self.isInverted = isInverted
        self.peakToNoiseDecibels = peakToNoiseDecibels
        self.returnLevelDecibels = returnLevelDecibels
        self.windowsWithoutSignal = windowsWithoutSignal
        self.framesLost = framesLost
        self.playbackLatency = playbackLatency
        self.playbackLatencyPort = playbackLatencyPort
        self.captureLatency = captureLatency
        self.captureLatencyPort = captureLatencyPort
        self.maximumDelayFrames = maximumDelayFrames
        self.signalPeriodFrames = signalPeriodFrames
    }

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

/// Everything `micmon latency` reports at the end of a run.
public struct LatencyFigures: Sendable, Equatable {
    public var serverName: String
    public var clientName: String
    public var sampleRate: Int
    public var periodFrames: Int
    public var seconds: Double
    public var timing: CallbackTimingFigures
    /// 1 µs histograms behind the percentiles.
    public var lateness: Histogram
    public var execution: Histogram
    public var serverLoadMean: Double
    public var serverLoadMax: Double
    public var xruns: UInt64
    public var xrunTimes: [Double]
    public var lateCycleTimes: [Double]
    public var lateCycleCount: UInt64
    public var roundTrip: RoundTripFigures?

    public init(
        serverName: String, clientName: String, sampleRate: Int, periodFrames: Int, seconds: Double,
        timing: CallbackTimingFigures, lateness: Histogram, execution: Histogram, serverLoadMean: Double,
        serverLoadMax: Double, xruns: UInt64, xrunTimes: [Double], lateCycleTimes: [Double],
        lateCycleCount: UInt64, roundTrip: RoundTripFigures?
    ) {
        self.serverName = serverName
        self.clientName = clientName
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.seconds = seconds
        self.timing = timing
        self.lateness = lateness
        self.execution = execution
        self.serverLoadMean = serverLoadMean
        self.serverLoadMax = serverLoadMax
        self.xruns = xruns
        self.xrunTimes = xrunTimes
        self.lateCycleTimes = lateCycleTimes
        self.lateCycleCount = lateCycleCount
        self.roundTrip = roundTrip
    }
}

/// A running latency measurement, for its live line.
public struct LatencyProgress: Sendable, Equatable {
    public var secondsRun: Double
    public var sampleRate: Int
    /// The estimator's state, when a loop is measured.
    public var loopState: DelayEstimator.State?
    /// Whether out_1 and in_1 are both connected, so the signal is sent.
    public var emissionIsArmed: Bool
    /// The latest round-trip estimate, in frames.
    public var latestEstimateFrames: Double?

    public init(
        secondsRun: Double, sampleRate: Int, loopState: DelayEstimator.State?, emissionIsArmed: Bool,
        latestEstimateFrames: Double?
    ) {
        self.secondsRun = secondsRun
        self.sampleRate = sampleRate
        self.loopState = loopState
        self.emissionIsArmed = emissionIsArmed
        self.latestEstimateFrames = latestEstimateFrames
    }
}
