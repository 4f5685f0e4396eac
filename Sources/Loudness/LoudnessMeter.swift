// The Swift face of libebur128: one EBU R128 / ITU-R BS.1770 measurement of one programme
// (momentary, short-term, integrated loudness, loudness range, sample and true peak). libebur128
// allocates and is not realtime-safe: never call it from a process callback. One thread at a
// time (the analysis thread live, the calling thread offline).

import CEbur128

/// What libebur128 refused, with its own name for the failure (the library has no message text
/// of its own: the names are its error enumeration's).
public struct LoudnessError: Error, CustomStringConvertible, Equatable {
    /// libebur128's error code (`EBUR128_ERROR_*`), or 0 when `ebur128_init` returned nothing.
    public let code: Int32
    public let operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    public var description: String {
        let name: String
        switch UInt32(bitPattern: code) {
        case EBUR128_ERROR_NOMEM.rawValue: name = "EBUR128_ERROR_NOMEM (out of memory)"
        case EBUR128_ERROR_INVALID_MODE.rawValue: name = "EBUR128_ERROR_INVALID_MODE"
        case EBUR128_ERROR_INVALID_CHANNEL_INDEX.rawValue: name = "EBUR128_ERROR_INVALID_CHANNEL_INDEX"
        case EBUR128_ERROR_NO_CHANGE.rawValue: name = "EBUR128_ERROR_NO_CHANGE"
        default: name = "error \(code)"
        }
        return "libebur128: \(operation) failed: \(name)"
    }
}

/// How a channel of a programme counts in its loudness (BS.1770's channel weights).
public enum LoudnessChannelRole: Sendable, Equatable {
    /// A front channel, weight 1 (left, right, or the one channel of a mono programme).
    case left, right
    /// A mono channel meant for two loudspeakers: counted twice (+3 dB), libebur128's
    /// `EBUR128_DUAL_MONO`.
    case dualMono
}

/// One programme's R128 measurement, fed interleaved float frames. Integrated loudness and LRA
/// use libebur128's histogram mode: its memory stays flat however long the take, and the
/// readings are quantized to its 0.1 dB bins (within the EBU tolerances).
public final class LoudnessMeter {
    private var state: UnsafeMutablePointer<ebur128_state>?
    public let channelCount: Int
    public let sampleRate: Int
    /// Whether true peak is measured (the 4× oversampling costs most of libebur128's time).
    public let measuresTruePeak: Bool
    /// Whether true peak is measured only over the blocks that could raise it (`TruePeakScreen`);
    /// false: libebur128 oversamples every sample. Both give the same value, bit for bit.
    public let screensTruePeak: Bool

    /// The true-peak measurement when screened: a second libebur128 state in true-peak mode,
    /// fed only the blocks the screen lets through, each after the samples before it.
    private var peakState: UnsafeMutablePointer<ebur128_state>?
    private let screen: TruePeakScreen
    /// The highest true peak per channel so far over the blocks the peak state measured.
    private var screenedPeaks: [Double]
    /// `historyFrames` frames before the block, then the block (interleaved).
    private var window: [Float]
    /// Whether the peak state was fed the frames just before the next block (then it already
    /// holds the right history and needs no priming).
    private var peakStateIsCurrent = true
    /// Frames of history kept before each block: more than the interpolator's delay line.
    static let historyFrames = 32
    static let blockFrames = 1024
    /// Blocks the peak state measured, and blocks screened, so far (for the benchmarks).
    public private(set) var blocksMeasured = 0
    public private(set) var blocksScreened = 0

    /// A meter for `roles.count` interleaved channels at `sampleRate`.
    public init(
        roles: [LoudnessChannelRole], sampleRate: Int, truePeak: Bool = true, screensTruePeak: Bool = true
    ) throws(LoudnessError) {
        precondition(!roles.isEmpty && sampleRate > 0)
        var mode = EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue | EBUR128_MODE_I.rawValue
        mode |= EBUR128_MODE_LRA.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue | EBUR128_MODE_HISTOGRAM.rawValue
        if truePeak && !screensTruePeak { mode |= EBUR128_MODE_TRUE_PEAK.rawValue }
        guard let state = ebur128_init(UInt32(roles.count), UInt(sampleRate), Int32(bitPattern: mode)) else {
            throw LoudnessError(code: Int32(bitPattern: EBUR128_ERROR_NOMEM.rawValue), operation: "ebur128_init")
        }
        self.state = state
        channelCount = roles.count
        self.sampleRate = sampleRate
        measuresTruePeak = truePeak
        self.screensTruePeak = truePeak && screensTruePeak
        screen = TruePeakScreen(sampleRate: sampleRate)
        screenedPeaks = Array(repeating: 0, count: roles.count)
        window = []
        if self.screensTruePeak && screen.factor > 1 {
            let peakMode = EBUR128_MODE_TRUE_PEAK.rawValue
            guard let peakState = ebur128_init(UInt32(roles.count), UInt(sampleRate), Int32(bitPattern: peakMode))
            else {
                ebur128_destroy(&self.state)
                throw LoudnessError(code: Int32(bitPattern: EBUR128_ERROR_NOMEM.rawValue), operation: "ebur128_init")
            }
            self.peakState = peakState
            window = Array(repeating: 0, count: (Self.historyFrames + Self.blockFrames) * roles.count)
        }
        for (index, role) in roles.enumerated() {
            let channel: channel
            switch role {
            case .left: channel = EBUR128_LEFT
            case .right: channel = EBUR128_RIGHT
            case .dualMono: channel = EBUR128_DUAL_MONO
            }
            let status = ebur128_set_channel(state, UInt32(index), Int32(bitPattern: channel.rawValue))
            if status != 0 { throw LoudnessError(code: status, operation: "ebur128_set_channel") }
        }
    }

    deinit {
        ebur128_destroy(&state)
        if peakState != nil { ebur128_destroy(&peakState) }
    }

    /// Adds `frameCount` interleaved frames (`channelCount` floats each).
    public func add(_ interleaved: UnsafePointer<Float>, frameCount: Int) throws(LoudnessError) {
        guard frameCount > 0 else { return }
        let status = ebur128_add_frames_float(state, interleaved, frameCount)
        if status != 0 { throw LoudnessError(code: status, operation: "ebur128_add_frames_float") }
        if peakState != nil { try screenTruePeak(interleaved, frameCount: frameCount) }
    }

    /// Measures true peak over the blocks of these frames whose bound could beat a channel's
    /// highest so far. Blocks it skips cannot hold a higher one, and the ones it measures are
    /// measured after the samples before them, as one pass over everything would: the value is
    /// the one libebur128 gives measuring every sample.
    private func screenTruePeak(_ interleaved: UnsafePointer<Float>, frameCount: Int) throws(LoudnessError) {
        let channels = channelCount
        let history = Self.historyFrames
        let reach = screen.span - 1
        var done = 0
        while done < frameCount {
            let count = min(Self.blockFrames, frameCount - done)
            try window.withUnsafeMutableBufferPointer { (buffer) throws(LoudnessError) in
                let base = buffer.baseAddress!
                (base + history * channels).update(from: interleaved + done * channels, count: count * channels)
                let seen = base + (history - reach) * channels
                var couldRise = false
                for channel in 0 ..< channels
                where screen.bound(seen, frameCount: reach + count, stride: channels, channel: channel)
                    > screenedPeaks[channel]
                {
                    couldRise = true
                    break
                }
                blocksScreened += 1
                if couldRise {
                    if !peakStateIsCurrent {
                        let status = ebur128_add_frames_float(peakState, base, history)
                        if status != 0 { throw LoudnessError(code: status, operation: "ebur128_add_frames_float") }
                    }
                    let status = ebur128_add_frames_float(peakState, base + history * channels, count)
                    if status != 0 { throw LoudnessError(code: status, operation: "ebur128_add_frames_float") }
                    for channel in 0 ..< channels {
                        var value = 0.0
                        if ebur128_prev_true_peak(peakState, UInt32(channel), &value) == 0 {
                            screenedPeaks[channel] = max(screenedPeaks[channel], value)
                        }
                    }
                    blocksMeasured += 1
                }
                peakStateIsCurrent = couldRise
                // The last `history` frames of (history + block) are the next block's history.
                base.update(from: base + count * channels, count: history * channels)
            }
            done += count
        }
    }

    /// Reads one value through a libebur128 getter; -∞ when it has nothing yet (its own -HUGE_VAL).
    private func read(_ getter: (UnsafeMutablePointer<ebur128_state>?, UnsafeMutablePointer<Double>) -> Int32)
        -> Double
    {
        var value = -Double.infinity
        return getter(state, &value) == 0 ? value : -Double.infinity
    }

    /// Loudness of the last 400 ms, LUFS (-∞ for silence).
    public var momentaryLUFS: Double { read(ebur128_loudness_momentary) }
    /// Loudness of the last 3 s, LUFS.
    public var shortTermLUFS: Double { read(ebur128_loudness_shortterm) }
    /// Loudness of the last 100 ms, LUFS (libebur128's 100 ms window): read at a hop, the hop's
    /// own. Sums 100 ms of samples, a tenth of what a momentary reading sums.
    public var lastHundredMillisecondsLUFS: Double { read { ebur128_loudness_window($0, 100, $1) } }
    /// Whether libebur128's 100 ms window is exactly its 100 ms hop at this rate: its window
    /// takes rate × 100 / 1000 frames (rounded down), its hop (rate + 5) / 10 (rounded).
    public var hundredMillisecondWindowIsTheHop: Bool { sampleRate * 100 / 1000 == (sampleRate + 5) / 10 }
    /// Gated loudness of everything so far (BS.1770-4: −70 LUFS absolute, −10 LU relative gate).
    public var integratedLUFS: Double { read(ebur128_loudness_global) }
    /// Loudness range so far (EBU Tech 3342), LU; 0 until there is anything to gate.
    public var loudnessRangeLU: Double {
        let value = read(ebur128_loudness_range)
        return value.isFinite ? value : 0
    }

    /// The highest true peak (4× oversampled at 48 kHz) of channel `index` so far, as a linear
    /// magnitude (1 = full scale); the sample peak without true-peak measurement.
    public func truePeak(channel index: Int) -> Double {
        if screensTruePeak {
            // libebur128's true peak is never below the sample peak; without oversampling (192 kHz
            // and above) it is the sample peak.
            return max(screenedPeaks[index], samplePeak(channel: index))
        }
        var value = 0.0
        let status =
            measuresTruePeak
            ? ebur128_true_peak(state, UInt32(index), &value) : ebur128_sample_peak(state, UInt32(index), &value)
        return status == 0 ? value : 0
    }

    /// The highest sample peak of channel `index` so far (linear magnitude).
    public func samplePeak(channel index: Int) -> Double {
        var value = 0.0
        return ebur128_sample_peak(state, UInt32(index), &value) == 0 ? value : 0
    }
}
