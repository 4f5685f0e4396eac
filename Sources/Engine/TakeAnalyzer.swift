// The analysis of a take: loudness and true peak (libebur128, through Loudness), per-channel
// statistics and the inter-mic correlation (DSP), fed interleaved frames in order. The live
// analysis thread (`AnalysisThread`) and `micmon report` (`FileAnalysis`) run the same code on
// the same samples, so a live take's summary and the report of its file agree. Not realtime-
// safe (libebur128 allocates): one non-realtime thread at a time.

import DSP
import Loudness

/// Which channels are measured together for loudness.
public enum LoudnessMode: String, Sendable, CaseIterable {
    /// Each channel is its own mono programme (the default: two mics are two signals).
    case perChannel = "per-channel"
    /// Each channel is its own programme, counted as a mono signal on two loudspeakers (+3 dB,
    /// BS.1770's dual mono).
    case dualMono = "dual-mono"
    /// The first two channels are one stereo programme (left, right); any others are measured alone.
    case stereo

    /// The programmes for `channelCount` channels: which channels each measures, and how.
    func programmes(channelCount: Int) -> [(channels: [Int], roles: [LoudnessChannelRole])] {
        switch self {
        case .perChannel: return (0 ..< channelCount).map { ([$0], [.left]) }
        case .dualMono: return (0 ..< channelCount).map { ([$0], [.dualMono]) }
        case .stereo:
            guard channelCount >= 2 else { return (0 ..< channelCount).map { ([$0], [.left]) } }
            return [([0, 1], [.left, .right])] + (2 ..< channelCount).map { ([$0], [.left]) }
        }
    }
}

/// Feeds a take's frames to one `LoudnessMeter` per programme, one `SignalStatistics` per channel
/// and a `CorrelationMeter` for the first two channels.
public final class TakeAnalyzer {
    public let channelNames: [String]
    public let sampleRate: Int
    public let mode: LoudnessMode
    /// Frames per envelope point (100 ms), or 0 when no envelope is kept.
    public let envelopeFrames: Int
    private var meters: [LoudnessMeter] = []
    private var programmes: [ProgrammeLoudness] = []
    /// Per programme: which hops could raise its highest short-term loudness.
    private var shortTermScreens: [ShortTermScreen] = []
    /// Per programme: the short-term loudness at the last hop, from the hops' own energies.
    private var hopShortTerms: [HopShortTerm] = []
    /// Whether the live readings' momentary and short-term loudness are the last hop's (read
    /// there at a cost that does not grow with the windows): true where libebur128's 100 ms
    /// window is its hop (every rate that is a multiple of 10 Hz); else they are read in full at
    /// each `readings()`.
    public let readsLoudnessAtHops: Bool
    private var statistics: [SignalStatistics]
    private var correlation: CorrelationMeter?
    private var frames: UInt64 = 0
    /// One programme's frames, deinterleaved from the take's (non-finite samples as 0).
    private var scratch: [Float]
    private static let chunkFrames = 4096
    /// Seconds per envelope point.
    public static let envelopeSeconds = 0.1

    /// - Parameters:
    ///   - keepsEnvelope: keep level and short-term envelopes for a picture.
    ///   - fullScale: the magnitude that counts as a clip (`SignalStatistics.fullScale(integerBits:)`).
    ///   - tracksCorrelationNow: follow the correlation of the last 300 ms (the live display's);
    ///     false keeps only the take-wide value (a file's report shows no other).
    public init(
        channelNames: [String], sampleRate: Int, mode: LoudnessMode = .perChannel, keepsEnvelope: Bool = false,
        fullScale: Double = 1, tracksCorrelationNow: Bool = true
    ) throws(LoudnessError) {
        precondition(!channelNames.isEmpty && sampleRate > 0)
        self.channelNames = channelNames
        self.sampleRate = sampleRate
        self.mode = mode
        self.tracksCorrelationNow = tracksCorrelationNow
        // The envelope points fall on libebur128's 100 ms block hops, so the short-term readings
        // kept there are the ones it computes.
        let pointFrames = Int((Double(sampleRate) * Self.envelopeSeconds).rounded())
        envelopeFrames = keepsEnvelope ? pointFrames : 0
        let statisticsPointFrames = envelopeFrames
        statistics = channelNames.map { _ in
            SignalStatistics(sampleRate: sampleRate, envelopeFrames: statisticsPointFrames, fullScale: fullScale)
        }
        hopFrames = pointFrames
        correlation = channelNames.count >= 2 ? CorrelationMeter(sampleRate: sampleRate) : nil
        var widest = 1
        for programme in mode.programmes(channelCount: channelNames.count) {
            meters.append(try LoudnessMeter(roles: programme.roles, sampleRate: sampleRate))
            let name = programme.channels.count == 1 ? channelNames[programme.channels[0]] : "stereo"
            programmes.append(ProgrammeLoudness(name: name, channels: programme.channels))
            shortTermScreens.append(ShortTermScreen())
            hopShortTerms.append(HopShortTerm())
            widest = max(widest, programme.channels.count)
        }
        scratch = Array(repeating: 0, count: Self.chunkFrames * widest)
        readsLoudnessAtHops = meters.allSatisfy(\.hundredMillisecondWindowIsTheHop)
    }

    /// Frames per 100 ms (the block hop at which the maxima are read).
    private let hopFrames: Int
    private let tracksCorrelationNow: Bool

    public var channelCount: Int { channelNames.count }
    /// Frames analysed so far.
    public var framesAnalysed: UInt64 { frames }
    /// 100 ms hops analysed so far (the live loudness readings change at each).
    public var hopsAnalysed: UInt64 { frames / UInt64(hopFrames) }
    /// NaN and ±∞ samples seen so far, over all channels (each analysed as 0).
    public var nonFiniteSamples: UInt64 { statistics.reduce(0) { $0 + $1.nonFiniteCount } }

    /// Adds `frameCount` interleaved frames (`channelCount` floats each).
    public func add(_ interleaved: UnsafePointer<Float>, frameCount: Int) throws(LoudnessError) {
        var done = 0
        while done < frameCount {
            let toHop = hopFrames - Int(frames % UInt64(hopFrames))
            let count = min(frameCount - done, Self.chunkFrames, toHop)
            try addChunk(interleaved + done * channelCount, frameCount: count)
            done += count
            if frames % UInt64(hopFrames) == 0 { noteHop() }
        }
    }

    private func addChunk(_ block: UnsafePointer<Float>, frameCount: Int) throws(LoudnessError) {
        let stride = channelCount
        for channel in 0 ..< stride {
            statistics[channel].add(block + channel, count: frameCount, stride: stride)
        }
        if tracksCorrelationNow {
            correlation?.add(block, block + 1, count: frameCount, stride: stride)
        } else {
            correlation?.addTotals(block, block + 1, count: frameCount, stride: stride)
        }
        for (index, meter) in meters.enumerated() {
            let channels = programmes[index].channels
            let width = channels.count
            try scratch.withUnsafeMutableBufferPointer { (buffer) throws(LoudnessError) in
                let out = buffer.baseAddress!
                for (slot, channel) in channels.enumerated() {
                    var frame = 0
                    while frame < frameCount {
                        let x = block[frame * stride + channel]
                        out[frame * width + slot] = x.isFinite ? x : 0
                        frame += 1
                    }
                }
                try meter.add(out, frameCount: frameCount)
            }
        }
        frames += UInt64(frameCount)
    }

    /// At each 100 ms hop: the live momentary and short-term readings, the maxima, and the
    /// short-term envelope point when one is kept. The 3 s sum behind a short-term reading is
    /// read only where the momentary readings leave room for a new maximum (`ShortTermScreen`),
    /// or for the envelope at odd rates; the live one and the envelope's come from the hops' own
    /// energies (`HopShortTerm`).
    private func noteHop() {
        for (index, meter) in meters.enumerated() {
            let momentary = meter.momentaryLUFS
            if readsLoudnessAtHops {
                hopShortTerms[index].noteHop(lufs: meter.lastHundredMillisecondsLUFS)
                programmes[index].momentaryLUFS = momentary
                programmes[index].shortTermLUFS = hopShortTerms[index].lufs
            }
            shortTermScreens[index].noteMomentary(momentary)
            if momentary > programmes[index].maxMomentaryLUFS { programmes[index].maxMomentaryLUFS = momentary }
            // Short-term readings count once 3 s of audio are in (before, the window is not full).
            let counts = frames >= 30 * UInt64(hopFrames)
            let couldRise = counts && shortTermScreens[index].couldExceed(programmes[index].maxShortTermLUFS)
            // The envelope's point is the hop's own reading where there is one (a Float, so the
            // two ways agree to its precision); else the 3 s sum.
            if envelopeFrames > 0 && readsLoudnessAtHops {
                programmes[index].shortTermEnvelope.append(Float(programmes[index].shortTermLUFS))
            }
            let envelopeNeedsSum = envelopeFrames > 0 && !readsLoudnessAtHops
            guard couldRise || envelopeNeedsSum else { continue }
            let shortTerm = meter.shortTermLUFS
            if couldRise, shortTerm > programmes[index].maxShortTermLUFS {
                programmes[index].maxShortTermLUFS = shortTerm
            }
            if envelopeNeedsSum { programmes[index].shortTermEnvelope.append(Float(shortTerm)) }
        }
    }

    /// The live readings, without envelopes: the momentary and short-term loudness as of the
    /// last 100 ms hop (libebur128's own block rate; -∞ before the first) when
    /// `readsLoudnessAtHops`, else as of the last frame; the rest as of the last frame.
    public func readings() -> (programmes: [ProgrammeLoudness], correlation: Double?) {
        var list = programmes
        for (index, meter) in meters.enumerated() {
            fill(&list[index], from: meter, windows: !readsLoudnessAtHops)
            list[index].shortTermEnvelope = []
        }
        return (list, correlation?.value)
    }

    /// Fills the readings from libebur128; `windows`: the momentary and short-term loudness too
    /// (each a sum over its whole window).
    private func fill(_ programme: inout ProgrammeLoudness, from meter: LoudnessMeter, windows: Bool = true) {
        if windows {
            programme.momentaryLUFS = meter.momentaryLUFS
            programme.shortTermLUFS = meter.shortTermLUFS
        }
        programme.integratedLUFS = meter.integratedLUFS
        programme.loudnessRangeLU = meter.loudnessRangeLU
        programme.truePeak = (0 ..< meter.channelCount).map { meter.truePeak(channel: $0) }.max() ?? 0
    }

    /// Everything, after the last frame (closes the envelopes' last points).
    public func result() -> TakeAnalysisResult {
        var list = programmes
        var channels = channelNames.enumerated().map { index, name in
            var stats = statistics[index]
            stats.finish()
            return ChannelAnalysis(name: name, statistics: stats, truePeak: 0)
        }
        for (index, meter) in meters.enumerated() {
            fill(&list[index], from: meter)
            for (slot, channel) in list[index].channels.enumerated() {
                channels[channel].truePeak = meter.truePeak(channel: slot)
            }
            if envelopeFrames > 0 && frames % UInt64(hopFrames) != 0 {
                list[index].shortTermEnvelope.append(Float(meter.shortTermLUFS))
            }
        }
        return TakeAnalysisResult(
            sampleRate: sampleRate, frames: frames, channels: channels, programmes: list,
            loudnessMode: mode.rawValue, correlation: correlation?.overall,
            correlationNow: tracksCorrelationNow ? correlation?.value : nil,
            envelopeSeconds: envelopeFrames > 0 ? Double(envelopeFrames) / Double(sampleRate) : 0)
    }
}
