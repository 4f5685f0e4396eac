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
    /// What the screen calls the channel instead of `name`: `--label`, or the source port's
    /// pretty name (JACK metadata); nil shows `name`.
    public var label: String?

    /// The label when there is one, else the port name.
    public var displayName: String { label ?? name }

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
    /// Loudness, true peak and correlation, when the analysis thread measures them.
    public var loudness: LoudnessDisplay?
    /// The standard meter's readings (`--meter` other than peak).
    public var ballistics: BallisticsDisplay?
    /// Free space on the take's file system and the time left at its rate (recording only).
    public var disk: DiskDisplay?
    /// With `record --trigger`: "armed", "recording" or "hanging" (below the off level).
    public var triggerState: String?

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

/// Loudness (EBU R128), true peak and inter-mic correlation as the display shows them. One entry
/// per programme in `programmes` (per channel by default, one for a stereo programme); values
/// not measured yet (less than 400 ms of audio, an ungated integrated reading) are `-infinity`.
public struct LoudnessDisplay: Sendable, Equatable {
    /// One measured programme (a channel, or the channels measured together).
    public struct Programme: Sendable, Equatable {
        /// What the programme measures (a channel's name, or `"stereo"`).
        public var name: String
        /// Momentary loudness (400 ms window), LUFS.
        public var momentaryLUFS: Double
        /// Short-term loudness (3 s window), LUFS.
        public var shortTermLUFS: Double
        /// Integrated (gated) loudness since the start, LUFS.
        public var integratedLUFS: Double
        /// Loudness range since the start, LU.
        public var loudnessRangeLU: Double
        /// Highest true peak since the start, dBTP (the largest of the programme's channels).
        public var truePeakDBTP: Double

        public init(
            name: String, momentaryLUFS: Double, shortTermLUFS: Double, integratedLUFS: Double,
            loudnessRangeLU: Double, truePeakDBTP: Double
        ) {
            self.name = name
            self.momentaryLUFS = momentaryLUFS
            self.shortTermLUFS = shortTermLUFS
            self.integratedLUFS = integratedLUFS
            self.loudnessRangeLU = loudnessRangeLU
            self.truePeakDBTP = truePeakDBTP
        }
    }

    public var programmes: [Programme]
    /// Correlation of the first two channels, −1…+1 (nil with fewer than two channels).
    public var correlation: Double?

    public init(programmes: [Programme], correlation: Double? = nil) {
        self.programmes = programmes
        self.correlation = correlation
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
    /// With `--trigger`: frames of the take spent armed that no file holds (then `frames` are
    /// the files' frames); nil without a trigger.
    public var framesArmed: UInt64?
    public var sampleRate: Int
    public var channels: [Channel]
    public var xruns: UInt64
    public var framesDropped: UInt64
    /// Graph-wide gaps (the driver itself was late: every client lost those cycles), the frames
    /// they span, and where they fall in the take (the first ones). Not drops: nothing fills them.
    public var serverGapCount: UInt64 = 0
    public var framesSkippedByServer: UInt64 = 0
    public var serverGaps: [Drop] = []
    /// micmon's own timeline losses (the server's clock ran past micmon; silence in their place,
    /// counted in `framesDropped`), where they fall, late counter reads that netted out, and the
    /// raw xrun callbacks behind the `xruns` events. docs/timeline.md.
    public var missedGapCount: UInt64 = 0
    public var framesMissed: UInt64 = 0
    public var missedGaps: [Drop] = []
    public var timelineJitter: UInt64 = 0
    /// Cycles micmon was given late (the next period early, then nothing new: PipeWire's idle
    /// buffer, or jackd2's same samples again), part of the missed gaps. docs/timeline.md.
    public var lateCycles: UInt64 = 0
    /// PipeWire only: runs of digital silence between sound that the graph may have given micmon
    /// alone (JACK cannot tell them from a source gone silent), their frames and places. Non-zero
    /// means exit 75. docs/timeline.md, "A silent period".
    public var uncertainGapCount: UInt64 = 0
    public var framesUncertain: UInt64 = 0
    public var uncertainGaps: [Drop] = []
    /// The platform counts only its driver's xruns (PipeWire's JACK): a client too late for the
    /// graph is no xrun there (docs/platforms.md).
    public var xrunsAreDriverOnly = false
    public var xrunCallbacks: UInt64 = 0
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
    /// Loudness, true peak, statistics and correlation of the recorded channels, when analysed.
    public var analysis: TakeAnalysisResult?
    /// Frames the analysis missed (it fell behind); 0 normally.
    public var analysisFramesMissed: UInt64 = 0
    /// The files a rotation or trigger run wrote (the latest listed), and how many in all (0:
    /// one plain take, `filePath` says it).
    public var files: [TakeFileEntry] = []
    public var fileCount = 0
    /// The standard meter's highest readings (`--meter` other than peak).
    public var ballistics: BallisticsDisplay?

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
