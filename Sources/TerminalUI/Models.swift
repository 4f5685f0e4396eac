import DSP

/// One channel as the meter display shows it (values already in dBFS).
public struct ChannelDisplay: Sendable, Equatable {
    public var name: String
    public var peakDBFS: Double
    public var holdDBFS: Double
    public var rmsDBFS: Double
    public var clipCount: UInt64
    /// NaN and ±∞ samples so far (counted in `clipCount` too; the levels read them as silence).
    public var nonFiniteCount: UInt64
    public var isConnected: Bool

    public init(
        name: String, peakDBFS: Double, holdDBFS: Double, rmsDBFS: Double,
        clipCount: UInt64 = 0, nonFiniteCount: UInt64 = 0, isConnected: Bool = true
    ) {
        self.nonFiniteCount = nonFiniteCount
        self.name = name
        self.peakDBFS = peakDBFS
        self.holdDBFS = holdDBFS
        self.rmsDBFS = rmsDBFS
        self.clipCount = clipCount
        self.isConnected = isConnected
    }

    /// From a published meter reading. UI thread (converts to dB).
    public init(name: String, reading: MeterReading, isConnected: Bool = true) {
        self.init(
            name: name, peakDBFS: reading.peakDBFS, holdDBFS: reading.holdDBFS,
            rmsDBFS: reading.rmsDBFS, clipCount: reading.clipCount, nonFiniteCount: reading.nonFiniteCount,
            isConnected: isConnected)
    }
}

/// Session-wide state shown under the meters.
public struct MeterStatus: Sendable, Equatable {
    public var elapsedSeconds: Double
    public var sampleRate: Int
    public var xruns: UInt64
    public var framesRecorded: UInt64
    public var framesDropped: UInt64
    public var isRecording: Bool
    public var fileName: String?
    /// With noise suppression: how far the clean channel's RMS sits below the primary's, in dB.
    public var noiseReductionDB: Double?

    public init(
        elapsedSeconds: Double, sampleRate: Int, xruns: UInt64 = 0, framesRecorded: UInt64 = 0,
        framesDropped: UInt64 = 0, isRecording: Bool = false, fileName: String? = nil
    ) {
        self.elapsedSeconds = elapsedSeconds
        self.sampleRate = sampleRate
        self.xruns = xruns
        self.framesRecorded = framesRecorded
        self.framesDropped = framesDropped
        self.isRecording = isRecording
        self.fileName = fileName
    }
}

/// What a finished session reports.
public struct SessionSummary: Sendable, Equatable {
    public struct Channel: Sendable, Equatable {
        public var name: String
        public var maxPeakDBFS: Double
        public var meanRMSDBFS: Double
        public var clipCount: UInt64
        /// NaN and ±∞ samples (also in `clipCount`; the levels read them as silence).
        public var nonFiniteCount: UInt64

        public init(
            name: String, maxPeakDBFS: Double, meanRMSDBFS: Double, clipCount: UInt64, nonFiniteCount: UInt64 = 0
        ) {
            self.nonFiniteCount = nonFiniteCount
            self.name = name
            self.maxPeakDBFS = maxPeakDBFS
            self.meanRMSDBFS = meanRMSDBFS
            self.clipCount = clipCount
        }

        /// From the last meter reading of the session (max peak, Σx²/frames, clips, non-finite).
        public init(name: String, reading: MeterReading) {
            self.init(
                name: name, maxPeakDBFS: reading.maxPeakDBFS,
                meanRMSDBFS: reading.meanRMSDBFS, clipCount: reading.clipCount,
                nonFiniteCount: reading.nonFiniteCount)
        }
    }

    /// Frames lost at `startFrame` (file position) and written as silence.
    public struct Drop: Sendable, Equatable {
        public var startFrame: UInt64
        public var length: UInt64

        public init(startFrame: UInt64, length: UInt64) {
            self.startFrame = startFrame
            self.length = length
        }
    }

    /// The process callback's timing, in µs: how late it woke after the cycle start and how
    /// long it ran (mean, p99 and max), and the period.
    public struct CallbackTiming: Sendable, Equatable {
        public var latenessP99, latenessMax, executionMean, executionP99, executionMax, periodUsecs: Double
        public init(
            latenessP99: Double, latenessMax: Double, executionMean: Double, executionP99: Double, executionMax: Double,
            periodUsecs: Double
        ) {
            self.latenessP99 = latenessP99
            self.latenessMax = latenessMax
            self.executionMean = executionMean
            self.executionP99 = executionP99
            self.executionMax = executionMax
            self.periodUsecs = periodUsecs
        }
    }

    public var durationSeconds: Double
    public var frames: UInt64
    public var sampleRate: Int
    public var channels: [Channel]
    public var xruns: UInt64
    public var framesDropped: UInt64
    /// Gaps in the server's timeline (cycles it ran without micmon, on xruns), the frames they
    /// span, and where they fall in the take (the first ones). Not drops: nothing fills them.
    public var serverGapCount: UInt64 = 0
    public var framesSkippedByServer: UInt64 = 0
    public var serverGaps: [Drop] = []
    public var drops: [Drop]
    public var filePath: String?
    /// The crash-safe intermediate (`FILE.partial.w64`) when the take went through one and it
    /// is still there (the conversion to FILE's container failed): it holds the take.
    public var partialPath: String?
    /// NaN and ±∞ samples monitoring sent to JACK as 0 (never as themselves).
    public var nonFiniteReplaced: UInt64 = 0
    /// Frames of a `--duration` take the server never delivered: the take ended on the wall
    /// clock while the graph was not calling micmon (the wall-clock watchdog).
    public var framesMissing: UInt64 = 0
    /// Why the session ended.
    public var exitReason: StopReason
    /// Callback timing, when it was measured.
    public var callbackTiming: CallbackTiming?

    public init(
        durationSeconds: Double, frames: UInt64, sampleRate: Int, channels: [Channel],
        xruns: UInt64 = 0, framesDropped: UInt64 = 0, drops: [Drop] = [],
        filePath: String? = nil, exitReason: StopReason, callbackTiming: CallbackTiming? = nil
    ) {
        self.callbackTiming = callbackTiming
        self.durationSeconds = durationSeconds
        self.frames = frames
        self.sampleRate = sampleRate
        self.channels = channels
        self.xruns = xruns
        self.framesDropped = framesDropped
        self.drops = drops
        self.filePath = filePath
        self.exitReason = exitReason
    }
}
