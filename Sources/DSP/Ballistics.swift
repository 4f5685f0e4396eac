// Standard meter ballistics (`--meter`): the IEC 60268-10 peak programme meters (Type I, DIN;
// Type IIa, BBC; Type IIb, EBU), the IEC 60268-17 VU meter and the K-System meters, as their
// constants, scales and reference levels. The per-sample recurrences are in
// BallisticsKernel.swift. Coefficients are made off the realtime thread (they call `exp`).

/// Which meter the inputs are read with. `peak` is micmon's own (sample peak with IEC 60268-18
/// fall-back, `ChannelMeter`); the others are the standards' ballistics.
public enum MeterType: String, Sendable, CaseIterable, BitwiseCopyable {
    case peak, ppm1, ppm2a, ppm2b, vu, k12, k14, k20

    /// What the reading is counted in.
    public var unit: String {
        switch self {
        case .peak: return "dBFS"
        case .ppm1, .ppm2b: return "dB"
        case .ppm2a: return "PPM"
        case .vu: return "VU"
        case .k12, .k14, .k20: return "K"
        }
    }

    /// The level that reads 0 on the scale (PPM 4 for ppm2a), in dBFS of a sine's peak (EBU R68
    /// alignment: 0 dBu = −18 dBFS).
    /// - ppm1: 0 dB on the DIN scale = +6 dBu = −9 dBFS (ARD's permitted maximum level);
    /// - ppm2a: PPM 4 = 0 dBu = −18 dBFS, 4 dB per mark (PPM 1 = −30, PPM 7 = −6 dBFS);
    /// - ppm2b: TEST (0 dB) = 0 dBu = −18 dBFS, scale −12 … +12 dB;
    /// - vu: 0 VU = +4 dBu = −14 dBFS;
    /// - k20, k14, k12: 0 = −20, −14, −12 dB RMS (AES17: a sine's RMS reads its peak level).
    public var referenceDBFS: Double {
        switch self {
        case .peak: return 0
        case .ppm1: return -9
        case .ppm2a, .ppm2b: return -18
        case .vu: return -14
        case .k12: return -12
        case .k14: return -14
        case .k20: return -20
        }
    }

    /// The scale's ends, in the reading's unit.
    public var scale: ClosedRange<Double> {
        switch self {
        case .peak: return -60 ... 0
        case .ppm1: return -50 ... 5
        case .ppm2a: return 0 ... 7
        case .ppm2b: return -12 ... 12
        case .vu: return -20 ... 3
        case .k12: return -28 ... 12
        case .k14: return -26 ... 14
        case .k20: return -20 ... 20
        }
    }

    /// A level in dB relative to `referenceDBFS` as the scale reads it (PPM marks for ppm2a).
    public func reading(decibelsOverReference db: Double) -> Double {
        self == .ppm2a ? 4 + db / 4 : db
    }
}

/// A ballistic meter's constants for one sample rate. Plain bits, made off the realtime thread.
public struct BallisticCoefficients: Sendable, BitwiseCopyable, Equatable {
    public let type: MeterType
    /// PPM: the two followers' charging weights per sample (1 − e^(−1/(τ·fs))), how much of the
    /// fast one the reading takes, and the per-sample fall-back factor (a straight line in dB;
    /// the K meters' peak section uses it too).
    public let fastAttack: Double
    public let slowAttack: Double
    public let fastWeight: Double
    public let release: Double
    /// PPM: the factor that makes a steady 1 kHz sine read its peak (the followers sit a little
    /// under it between the sine's peaks), found by running one through them.
    public let calibration: Double
    /// VU: the second-order movement ẍ = ω²(u − x) − 2ζωẋ, stepped per sample: dt·ω², dt·2ζω, dt.
    public let springPerSample: Double
    public let dampingPerSample: Double
    public let secondsPerSample: Double
    /// K: the mean square's per-sample weight (1 − e^(−1/(τ·fs))).
    public let meanSquareGain: Double

    /// IEC 60268-10 Type I (DIN 45406): a 10 ms 5 kHz burst reads −1 dB, 5 ms −2 dB (its 5 ms
    /// integration time); falls 20 dB in 1.5 s.
    static let ppm1 = (fast: 0.0005, slow: 0.003, weight: 0.6, fallDB: 20.0, fallSeconds: 1.5)
    /// IEC 60268-10 Type II (BBC IIa, EBU IIb): 10 ms reads −2 dB (its 10 ms integration time),
    /// 5 ms −4, 1.5 ms −9, 0.5 ms −17; falls 24 dB in 2.8 s.
    static let ppm2 = (fast: 0.0015, slow: 0.005, weight: 0.7, fallDB: 24.0, fallSeconds: 2.8)
    /// IEC 60268-17 VU: a reference-level sine reaches 99 % of its reading in 300 ms and overshoots
    /// by 1.25 % (the standard allows 1 … 1.5 %).
    public static let vuRiseSeconds = 0.3
    public static let vuOvershoot = 0.0125
    /// K-System average: RMS with a 300 ms time constant (as micmon's RMS).
    public static let kTimeConstant = 0.3

    public init(type: MeterType, sampleRate: Double) {
        precondition(sampleRate > 0 && sampleRate.isFinite)
        self.type = type
        let ppm = type == .ppm1 ? Self.ppm1 : Self.ppm2
        fastAttack = 1 - DSPMath.exp(-1 / (ppm.fast * sampleRate))
        slowAttack = 1 - DSPMath.exp(-1 / (ppm.slow * sampleRate))
        fastWeight = ppm.weight
        // The K meters' peak section falls back as micmon's peak meter: 20 dB in 1.7 s.
        let isK = type == .k12 || type == .k14 || type == .k20
        let fallPerSecond = isK ? MeterCoefficients.defaultFallbackDecibelsPerSecond : ppm.fallDB / ppm.fallSeconds
        release = DSPMath.amplitude(decibels: -fallPerSecond / sampleRate)
        // ζ from the overshoot: e^(−ζπ/√(1−ζ²)) = overshoot.
        let l = -DSPMath.log(Self.vuOvershoot) / Double.pi
        let zeta = l / (1 + l * l).squareRoot()
        let omega = Self.naturalFrequency(zeta: zeta, reaching: 0.99, at: Self.vuRiseSeconds)
        secondsPerSample = 1 / sampleRate
        springPerSample = omega * omega / sampleRate
        dampingPerSample = 2 * zeta * omega / sampleRate
        meanSquareGain = 1 - DSPMath.exp(-1 / (Self.kTimeConstant * sampleRate))
        calibration = Self.steadyReading(
            fastAttack: fastAttack, slowAttack: slowAttack, weight: fastWeight, release: release,
            sampleRate: sampleRate)
    }

    /// 1 / the followers' settled reading of a unit 1 kHz sine (its last 100 ms of 500).
    static func steadyReading(
        fastAttack: Double, slowAttack: Double, weight: Double, release: Double, sampleRate: Double
    ) -> Double {
        var z1 = 0.0
        var z2 = 0.0
        var high = 0.0
        let frames = Int(sampleRate / 2)
        for frame in 0 ..< frames {
            let x = abs(DSPMath.sin(2 * Double.pi * 1000 * Double(frame) / sampleRate))
            z1 *= release
            z2 *= release
            if x > z1 { z1 += fastAttack * (x - z1) }
            if x > z2 { z2 += slowAttack * (x - z2) }
            if frame >= frames - frames / 5 { high = max(high, weight * z1 + (1 - weight) * z2) }
        }
        return high > 0 ? 1 / high : 1
    }

    /// The ω at which the step response of the second-order movement with damping ζ < 1 first
    /// reaches `fraction` after `seconds`. The response depends on ω·t alone, so the ω·t where it
    /// first gets there is found once, stepping along the closed form, and divided by `seconds`.
    static func naturalFrequency(zeta: Double, reaching fraction: Double, at seconds: Double) -> Double {
        let root = (1 - zeta * zeta).squareRoot()
        var u = 0.0
        let step = 0.0002
        while u < 50 {
            let (sine, cosine) = DSPMath.sinCos(root * u)
            let y = 1 - DSPMath.exp(-zeta * u) * (cosine + zeta / root * sine)
            if y >= fraction { break }
            u += step
        }
        return u / seconds
    }
}

/// One channel's ballistic meter state: plain bits in memory the realtime thread owns, published
/// through a latest-value mailbox.
public struct BallisticMeter: Sendable, BitwiseCopyable, Equatable {
    /// PPM: the fast and slow followers; VU: the movement's position and velocity; K: the mean
    /// square (in `fast`) and the sample peak with fall-back (in `slow`).
    public var fast: Double = 0
    public var slow: Double = 0
    /// The reading as a linear amplitude (a sine's peak) for PPM and VU, as a power (2·mean
    /// square: AES17, a sine's reads its peak squared) for K; and the highest it has been.
    public var level: Double = 0
    public var maxLevel: Double = 0
    /// K only: the peak section, as a linear amplitude.
    public var peak: Double = 0

    public init() {}

    /// The reading on the type's scale (PPM marks, dB, VU or K units). Not the realtime thread.
    public func reading(_ type: MeterType) -> Double { Self.reading(level, type) }

    /// The highest reading so far.
    public func maxReading(_ type: MeterType) -> Double { Self.reading(maxLevel, type) }

    static func reading(_ level: Double, _ type: MeterType) -> Double {
        let isPower = type == .k12 || type == .k14 || type == .k20
        let db = isPower ? Decibels.meanSquareToDBFS(level) : Decibels.amplitudeToDBFS(level)
        return type.reading(decibelsOverReference: db - type.referenceDBFS)
    }

    /// K only: the peak section on the K scale.
    public func peakReading(_ type: MeterType) -> Double {
        type.reading(decibelsOverReference: Decibels.amplitudeToDBFS(peak) - type.referenceDBFS)
    }
}
