// Engine's session results as TerminalUI's plain model values: the one place the CLI
// translates between the two. Main thread.
import Engine
import Jack
import TerminalUI

extension TimingPercentiles {
    init(_ p: CallbackTimingSummary.Percentiles) {
        self.init(p50: p.p50, p90: p.p90, p99: p.p99, p999: p.p999, max: p.max, mean: p.mean)
    }
}

extension PortLatency {
    init?(_ range: JackLatencyRange?) {
        guard let range else { return nil }
        self.init(min: range.min, max: range.max)
    }
}

extension LatencyFigures {
    init(_ summary: LatencySummary) {
        let timing = summary.callbackTiming
        self.init(
            serverName: summary.serverName, clientName: summary.clientName, sampleRate: summary.sampleRate,
            periodFrames: summary.periodFrames, seconds: summary.seconds,
            timing: CallbackTimingFigures(
                cycles: timing.cycles, lateness: TimingPercentiles(timing.lateness),
                execution: TimingPercentiles(timing.execution), periodUsecs: timing.periodUsecs,
                cyclesMissed: timing.cyclesMissed),
            lateness: summary.lateness, execution: summary.execution, serverLoadMean: summary.serverLoadMean,
            serverLoadMax: summary.serverLoadMax, xruns: summary.xruns, xrunTimes: summary.xrunTimes,
            lateCycleTimes: summary.lateCycleTimes, lateCycleCount: summary.lateCycleCount,
            roundTrip: summary.roundTrip.map(RoundTripFigures.init))
    }
}

extension RoundTripFigures {
    init(_ trip: RoundTripResult) {
        self.init(
            route: trip.route, sendPort: trip.sendPort, returnPort: trip.returnPort,
            status: Status(rawValue: trip.status.rawValue) ?? .notLocked, estimates: trip.estimates,
            minimumFrames: trip.minimumFrames, meanFrames: trip.meanFrames, maximumFrames: trip.maximumFrames,
            lockMilliseconds: trip.lockMilliseconds, lockFrames: trip.lockFrames, isInverted: trip.isInverted,
            peakToNoiseDecibels: trip.peakToNoiseDecibels, returnLevelDecibels: trip.returnLevelDecibels,
            windowsWithoutSignal: trip.windowsWithoutSignal, framesLost: trip.framesLost,
            playbackLatency: PortLatency(trip.playbackLatency), playbackLatencyPort: trip.playbackLatencyPort,
            captureLatency: PortLatency(trip.captureLatency), captureLatencyPort: trip.captureLatencyPort,
            maximumDelayFrames: trip.maximumDelayFrames, signalPeriodFrames: trip.signalPeriodFrames)
    }
}

extension LatencyProgress {
    init(_ session: LatencySession) {
        self.init(
            secondsRun: session.secondsRun, sampleRate: session.sampleRate, loopState: session.roundTripState,
            emissionIsArmed: session.emissionIsArmed, latestEstimateFrames: session.latestEstimate?.delayFrames)
    }
}

extension InputRouteChange {
    init(_ change: RouteChange) {
        let kind: Kind
        switch change.kind {
        case .sourceGone: kind = .sourceGone
        case .sourceBack: kind = .sourceBack
        case .sourceMatched: kind = .sourceMatched
        case .sourceFound: kind = .sourceFound
        case .connectionsChanged: kind = .connectionsChanged
        }
        self.init(kind: kind, input: change.input, ports: change.ports, seconds: change.takeSeconds)
    }
}

extension SessionSummary {
    init(_ summary: CaptureSummary, reason: StopReason, path: String?) {
        let timing = summary.callbackTiming
        // A paused take's length is the frames it holds; a triggered run's, the frames its
        // files hold (the time armed is said apart).
        let frames = summary.framesArmed == nil ? summary.framesTaken - summary.framesPaused : summary.framesWritten
        self.init(
            durationSeconds: Double(frames) / Double(summary.sampleRate),
            frames: frames,
            sampleRate: summary.sampleRate,
            channels: zip(summary.channelNames, summary.readings).map { name, reading in
                SessionSummary.Channel(name: name, reading: reading)
            },
            xruns: summary.xruns,
            framesDropped: summary.framesDropped,
            drops: summary.drops.map { SessionSummary.Drop(startFrame: $0.startFrame, length: $0.frameCount) },
            filePath: path,
            exitReason: reason,
            callbackTiming: timing.cycles == 0
                ? nil
                : SessionSummary.CallbackTiming(
                    latenessP99: timing.lateness.p99, latenessMax: timing.lateness.max,
                    executionMean: timing.execution.mean, executionP99: timing.execution.p99,
                    executionMax: timing.execution.max, periodUsecs: timing.periodUsecs))
        framesSkippedByServer = summary.framesSkippedByServer
        framesArmed = summary.framesArmed
        nonFiniteReplaced = summary.monitorNonFiniteReplaced
        partialPath = summary.partialPath
        serverGapCount = summary.serverGapCount
        serverGaps = summary.serverGaps.map { SessionSummary.Drop(startFrame: $0.startFrame, length: $0.frameCount) }
        missedGapCount = summary.missedGapCount
        framesMissed = summary.framesMissed
        missedGaps = summary.missedGaps.map { SessionSummary.Drop(startFrame: $0.startFrame, length: $0.frameCount) }
        timelineJitter = summary.timelineJitter
        lateCycles = summary.lateCycles
        uncertainGapCount = summary.uncertainGapCount
        framesUncertain = summary.framesUncertain
        uncertainGaps = summary.uncertainGaps.map {
            SessionSummary.Drop(startFrame: $0.startFrame, length: $0.frameCount)
        }
        xrunsAreDriverOnly = JackClient.isPipeWire
        xrunCallbacks = summary.xrunCallbacks
        analysis = summary.analysis
        analysisFramesMissed = summary.analysisFramesMissed
        fileCount = summary.fileCount
        files = summary.files.map(TakeFileEntry.init)
        if summary.meterType != .peak {
            ballistics = BallisticsDisplay(
                type: summary.meterType, names: summary.analysis?.channels.map(\.name) ?? summary.channelNames,
                meters: summary.ballisticReadings)
        }
    }
}

extension HookReportLine {
    /// A hook's result as the log shows it (`--hook-timeout` for the timed-out message).
    init(_ result: HookResult, sampleRate: Int, timeout: Double) {
        let status: Status
        var exitCode: Int32?
        var signal: Int32?
        var detail = result.lastLine
        switch result.outcome {
        case .exited(let code):
            status = code == 0 ? .ok : .failed
            exitCode = code
        case .signaled(let number):
            status = .failed
            signal = number
        case .timedOut: status = .timedOut
        case .failedToStart(let reason):
            status = .notStarted
            detail = reason
        case .notRun(let reason):
            status = .notRun
            detail = reason
        }
        self.init(
            hook: result.job.hook, event: result.job.event, command: result.job.command,
            takeSeconds: result.job.takeSeconds, takeFrame: result.job.takeFrame, status: status, exitCode: exitCode,
            signal: signal, seconds: result.seconds, detail: detail, timeout: timeout)
    }
}

extension DiskDisplay {
    init(_ reading: DiskReading) {
        self.init(freeBytes: reading.freeBytes, secondsLeft: reading.secondsLeft)
    }
}

extension TakeFileEntry {
    init(_ file: ClosedTakeFile) {
        self.init(
            path: file.path, frameCount: file.frameCount, firstTakeFrame: file.takeRange.lowerBound,
            endTakeFrame: file.takeRange.upperBound, framesDropped: file.framesDropped, failure: file.failure)
    }
}
