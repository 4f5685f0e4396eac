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

    /// A meter for `roles.count` interleaved channels at `sampleRate`.
    public init(roles: [LoudnessChannelRole], sampleRate: Int, truePeak: Bool = true) throws(LoudnessError) {
        precondition(!roles.isEmpty && sampleRate > 0)
        var mode = EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue | EBUR128_MODE_I.rawValue
        mode |= EBUR128_MODE_LRA.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue | EBUR128_MODE_HISTOGRAM.rawValue
        if truePeak { mode |= EBUR128_MODE_TRUE_PEAK.rawValue }
        guard let state = ebur128_init(UInt32(roles.count), UInt(sampleRate), Int32(bitPattern: mode)) else {
            throw LoudnessError(code: Int32(bitPattern: EBUR128_ERROR_NOMEM.rawValue), operation: "ebur128_init")
        }
        self.state = state
        channelCount = roles.count
        self.sampleRate = sampleRate
        measuresTruePeak = truePeak
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

    deinit { ebur128_destroy(&state) }

    /// Adds `frameCount` interleaved frames (`channelCount` floats each).
    public func add(_ interleaved: UnsafePointer<Float>, frameCount: Int) throws(LoudnessError) {
        guard frameCount > 0 else { return }
        let status = ebur128_add_frames_float(state, interleaved, frameCount)
        if status != 0 { throw LoudnessError(code: status, operation: "ebur128_add_frames_float") }
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
