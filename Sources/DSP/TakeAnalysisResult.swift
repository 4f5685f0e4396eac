// What the analysis of a take found (live, at its end, or `micmon report` of its file): plain
// values for the summary, the report's text, JSON and picture. Any thread.

/// One measured loudness programme: a channel alone, or channels measured together.
public struct ProgrammeLoudness: Sendable, Equatable {
    /// A channel's name, or `"stereo"`.
    public var name: String
    /// The take's channels it measures, in order.
    public var channels: [Int]
    public var momentaryLUFS: Double
    public var shortTermLUFS: Double
    public var integratedLUFS: Double
    public var loudnessRangeLU: Double
    /// The highest true peak of its channels, linear (1 = full scale).
    public var truePeak: Double
    /// The highest momentary and short-term loudness seen so far, LUFS.
    public var maxMomentaryLUFS: Double
    public var maxShortTermLUFS: Double
    /// Short-term loudness at the end of each envelope point (LUFS, -∞ when silent), for pictures.
    public var shortTermEnvelope: [Float]

    public init(
        name: String, channels: [Int], momentaryLUFS: Double = -.infinity, shortTermLUFS: Double = -.infinity,
        integratedLUFS: Double = -.infinity, loudnessRangeLU: Double = 0, truePeak: Double = 0,
        maxMomentaryLUFS: Double = -.infinity, maxShortTermLUFS: Double = -.infinity,
        shortTermEnvelope: [Float] = []
    ) {
        self.name = name
        self.channels = channels
        self.momentaryLUFS = momentaryLUFS
        self.shortTermLUFS = shortTermLUFS
        self.integratedLUFS = integratedLUFS
        self.loudnessRangeLU = loudnessRangeLU
        self.truePeak = truePeak
        self.maxMomentaryLUFS = maxMomentaryLUFS
        self.maxShortTermLUFS = maxShortTermLUFS
        self.shortTermEnvelope = shortTermEnvelope
    }

    /// The true peak in dBTP (−160 for silence).
    public var truePeakDBTP: Double { Decibels.amplitudeToDBFS(truePeak) }
}

/// One channel of an analysed take.
public struct ChannelAnalysis: Sendable, Equatable {
    public var name: String
    public var statistics: SignalStatistics
    /// This channel's highest true peak, linear.
    public var truePeak: Double

    public init(name: String, statistics: SignalStatistics, truePeak: Double) {
        self.name = name
        self.statistics = statistics
        self.truePeak = truePeak
    }

    public var samplePeakDBFS: Double { Decibels.amplitudeToDBFS(statistics.samplePeak) }
    public var truePeakDBTP: Double { Decibels.amplitudeToDBFS(truePeak) }
    public var rmsDBFS: Double { Decibels.amplitudeToDBFS(statistics.rms) }
    public var dcOffsetDBFS: Double { Decibels.amplitudeToDBFS(abs(statistics.dcOffset)) }
}

/// A whole take's analysis.
public struct TakeAnalysisResult: Sendable, Equatable {
    public var sampleRate: Int
    public var frames: UInt64
    public var channels: [ChannelAnalysis]
    public var programmes: [ProgrammeLoudness]
    /// The loudness mode's name (`per-channel`, `dual-mono`, `stereo`).
    public var loudnessMode: String
    /// Correlation of the first two channels: over the whole take, and the running reading
    /// (`CorrelationMeter.defaultTimeConstant`) at its end; nil with one channel.
    public var correlation: Double?
    public var correlationNow: Double?
    /// Seconds per envelope point (0 without envelopes).
    public var envelopeSeconds: Double
    /// Non-finite samples the analysis read as 0, all channels.
    public var nonFiniteCount: UInt64 {
        channels.reduce(0) { $0 + $1.statistics.nonFiniteCount }
    }

    public init(
        sampleRate: Int, frames: UInt64, channels: [ChannelAnalysis], programmes: [ProgrammeLoudness],
        loudnessMode: String, correlation: Double? = nil, correlationNow: Double? = nil, envelopeSeconds: Double = 0
    ) {
        self.sampleRate = sampleRate
        self.frames = frames
        self.channels = channels
        self.programmes = programmes
        self.loudnessMode = loudnessMode
        self.correlation = correlation
        self.correlationNow = correlationNow
        self.envelopeSeconds = envelopeSeconds
    }

    public var durationSeconds: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }
}
