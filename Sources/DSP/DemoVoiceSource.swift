/// A deterministic stand-in for two microphones near one talker, for machines without any.
///
/// The voice: a buzzy glottal-like source at 100…220 Hz whose harmonics fall geometrically
/// (ρⁿ, ρ = 0.88: −1.1 dB per harmonic, summed in closed form, so no loop and negligible
/// aliasing), gliding towards a new target pitch each syllable and falling through each
/// phrase; shaped by three cascaded formant resonators (one of five vowels per syllable);
/// gated by a ≈4 Hz syllable envelope in phrases of 3–7 syllables with 0.25–0.7 s pauses
/// (it starts with one). The primary mic gets the voice peaking around −8 dBFS (−13…−5 at
/// any seed and rate from 8 to 192 kHz, tested); the reference mic gets it 8 dB lower
/// (`referenceVoiceDecibels`), 0.3 ms later and slightly low-passed. Both get noise around
/// −52 dBFS RMS: a pinkish part common to both mics plus a low-passed part of their own.
/// Output is hard-limited at ±0.9 as a safety net (not reached in practice).
///
/// `Noise.fan` is a noisy room for showing the noise suppressor: the talker 6 dB quieter (peaks
/// near −14 dBFS) and a floor fan a few metres away, far-field sound at the same level at both
/// mics: a rumbling broadband part (the pink noise low-passed at ≈ 500 Hz plus a little of it
/// unfiltered) and a 117 Hz blade tone with two harmonics, ≈ −15 dBFS RMS (peaks near −3 dBFS).
/// The fan then dominates the primary's RMS even while the talker speaks, so the meter's noise
/// reduction shows what the suppressor takes away.
///
/// Everything is a per-sample recurrence (a rotating phasor, not `sin`), so the output depends
/// only on the seed and the sample rate, never on how the frames are split into calls.
public struct DemoVoiceSource: Sendable, BitwiseCopyable {
    /// Level of the voice at the reference mic relative to the primary mic.
    public static var referenceVoiceDecibels: Double { -8 }
    /// Safety limit of every output sample.
    public static var outputLimit: Float { 0.9 }

    /// The room's noise besides the talker.
    public enum Noise: Sendable, BitwiseCopyable {
        /// Quiet room noise only (≈ −52 dBFS).
        case room
        /// A loud fan a few metres away (≈ −15 dBFS) and a quieter talker, for `demo --denoise`.
        case fan
    }

    struct Resonator: BitwiseCopyable {  // Klatt: y = a·x + b·y1 + c·y2, unity gain at DC
        var a = 0.0, b = 0.0, c = 0.0
        init() {}
        init(frequency: Double, bandwidth: Double, sampleRate: Double) {
            let f = min(frequency, 0.45 * sampleRate)
            let r = DSPMath.exp(-Double.pi * bandwidth / sampleRate)
            c = -r * r
            b = 2 * r * DSPMath.cos(2 * Double.pi * f / sampleRate)
            a = 1 - b - c
        }
        /// |H(e^{iω})| at `frequency`. Off the realtime thread.
        func magnitude(at frequency: Double, sampleRate: Double) -> Double {
            let w = 2 * Double.pi * frequency / sampleRate
            // denominator 1 − b·e^{−iω} − c·e^{−2iω}
            let re = 1 - b * DSPMath.cos(w) - c * DSPMath.cos(2 * w)
            let im = b * DSPMath.sin(w) + c * DSPMath.sin(2 * w)
            return a / DSPMath.squareRoot(re * re + im * im)
        }
    }

    struct Vowel: BitwiseCopyable {
        var r1 = Resonator(), r2 = Resonator(), r3 = Resonator()
        var gain = 1.0  // normalises the cascade to unity at F1
        init() {}
        init(_ f1: Double, _ f2: Double, _ f3: Double, sampleRate fs: Double) {
            r1 = Resonator(frequency: f1, bandwidth: 90, sampleRate: fs)
            r2 = Resonator(frequency: f2, bandwidth: 110, sampleRate: fs)
            r3 = Resonator(frequency: f3, bandwidth: 160, sampleRate: fs)
            let f = min(f1, 0.45 * fs)
            gain =
                1
                / (r1.magnitude(at: f, sampleRate: fs) * r2.magnitude(at: f, sampleRate: fs)
                    * r3.magnitude(at: f, sampleRate: fs))
        }
    }

    /// Ratio of successive harmonic amplitudes of the glottal source.
    static var harmonicRatio: Double { 0.88 }
    /// Voice level after the formant filters: puts the primary's peaks near −8 dBFS.
    static var voiceGain: Double { 1.2 }

    // Fixed after init.

    let sampleRate: Double
    let vowels: (Vowel, Vowel, Vowel, Vowel, Vowel)
    let radiansPerHertz: Double  // 2π / fs
    let glide: Double  // f0 one-pole coefficient (≈ 60 ms)
    let envelopeSmoothing: Double  // envelope one-pole coefficient (≈ 8 ms)
    let delayFrames: Int  // reference path delay, < 64
    let referenceGain: Double
    let referenceLowPass: Double  // one-pole coefficient (≈ 4 kHz)
    let fanGain: Double  // 0 without the fan
    let voiceScale: Double  // 1 in the quiet room
    let fanLowPass: Double  // one-pole coefficient (≈ 500 Hz)
    let bladeCos: Double, bladeSin: Double  // the blade tone's rotation per sample

    // PRNG (xorshift64*).
    var rng: UInt64
    // Glottal oscillator: unit phasor rotated by the current f0 each sample.
    var phasorRe = 1.0, phasorIm = 0.0
    var f0 = 150.0, f0Target = 150.0
    // Syllables and phrases.
    var phraseF0 = 150.0
    var syllablesLeft = 0, syllableIndex = 0
    var pauseFramesLeft = 0
    var syllablePosition = 0.0, syllableStep = 0.0  // u in 0…1 across a syllable
    var syllableAmplitude = 0.0
    var envelope = 0.0
    var vowelIndex = 0
    // Filter states.
    var f1y1 = 0.0, f1y2 = 0.0, f2y1 = 0.0, f2y2 = 0.0, f3y1 = 0.0, f3y2 = 0.0
    var pink0 = 0.0, pink1 = 0.0, pink2 = 0.0
    var noisePrimary = 0.0, noiseReference = 0.0
    var referenceState = 0.0
    var fanState = 0.0
    var bladeRe = 1.0, bladeIm = 0.0
    var delayLine = SIMD64<Float>(repeating: 0)
    var delayIndex = 0

    /// Any thread except the realtime one (computes filter coefficients with `exp`/`cos`).
    public init(sampleRate: Double, seed: UInt64, noise: Noise = .room) {
        precondition(sampleRate >= 8000 && sampleRate.isFinite, "sample rate must be ≥ 8000 Hz")
        self.sampleRate = sampleRate
        vowels = (
            Vowel(730, 1090, 2440, sampleRate: sampleRate),  // a
            Vowel(530, 1840, 2480, sampleRate: sampleRate),  // e
            Vowel(270, 2290, 3010, sampleRate: sampleRate),  // i
            Vowel(570, 840, 2410, sampleRate: sampleRate),  // o
            Vowel(300, 870, 2240, sampleRate: sampleRate)
        )  // u
        radiansPerHertz = 2 * Double.pi / sampleRate
        glide = 1 - DSPMath.exp(-1 / (0.060 * sampleRate))
        envelopeSmoothing = 1 - DSPMath.exp(-1 / (0.008 * sampleRate))
        delayFrames = min(63, DSPMath.roundToInt(0.0003 * sampleRate))
        referenceGain = DSPMath.amplitude(decibels: Self.referenceVoiceDecibels)
        referenceLowPass = 1 - DSPMath.exp(-2 * Double.pi * 4000 / sampleRate)
        fanGain = noise == .fan ? 2.5 : 0
        voiceScale = noise == .fan ? 0.5 : 1
        fanLowPass = 1 - DSPMath.exp(-2 * Double.pi * 500 / sampleRate)
        bladeCos = DSPMath.cos(2 * Double.pi * 117 / sampleRate)
        bladeSin = DSPMath.sin(2 * Double.pi * 117 / sampleRate)
        // SplitMix64 scrambles the seed so every seed (0 included) gives a good xorshift state.
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        rng = z == 0 ? 0x2545_F491_4F6C_DD1D : z
    }

    /// Renders `count` frames for both mics (≈ 50 ns a frame in release builds). Realtime
    /// thread: no locks, no allocation, no C calls.
    @_noLocks @_noAllocation
    public mutating func render(
        primary: UnsafeMutablePointer<Float>, reference: UnsafeMutablePointer<Float>, count: Int
    ) {
        var i = 0
        while i < count {
            let voice = voiceScale * nextVoiceSample()
            // Noise: pinkish common part (Kellet's economy filter) + low-passed own part.
            let common = nextBipolar()
            pink0 = 0.99765 * pink0 + common * 0.0990460
            pink1 = 0.96300 * pink1 + common * 0.2965164
            pink2 = 0.57000 * pink2 + common * 1.0526913
            let pink = pink0 + pink1 + pink2 + common * 0.1848
            noisePrimary += 0.25 * (nextBipolar() - noisePrimary)
            noiseReference += 0.25 * (nextBipolar() - noiseReference)
            // The fan: far field, the same at both mics (0 without it).
            fanState += fanLowPass * (pink - fanState)
            let re = bladeRe * bladeCos - bladeIm * bladeSin
            let im = bladeRe * bladeSin + bladeIm * bladeCos
            let k = 1.5 - 0.5 * (re * re + im * im)  // one Newton step keeps |z| = 1
            bladeRe = re * k
            bladeIm = im * k
            // sin 2θ and sin 3θ of the blade phasor: its harmonics.
            let second = 2 * bladeRe * bladeIm
            let third = bladeIm * (3 - 4 * bladeIm * bladeIm)
            let fan = fanGain * (0.05 * fanState + 0.004 * pink + 0.012 * bladeIm + 0.006 * second + 0.003 * third)
            let noiseP = 0.0016 * pink + 0.004 * noisePrimary + fan
            let noiseR = 0.0016 * pink + 0.004 * noiseReference + fan

            // Reference path: delayed (ring of 64), quieter, duller.
            let delayed = withUnsafeMutableBytes(of: &delayLine) { ring in  // in place, no copy
                ring.storeBytes(of: Float(voice), toByteOffset: delayIndex &* 4, as: Float.self)
                return Double(ring.load(fromByteOffset: ((delayIndex &- delayFrames) & 63) &* 4, as: Float.self))
            }
            delayIndex = (delayIndex &+ 1) & 63
            referenceState += referenceLowPass * (delayed * referenceGain - referenceState)

            primary[i] = Self.limit(Float(voice + noiseP))
            reference[i] = Self.limit(Float(referenceState + noiseR))
            i += 1
        }
    }

    @inline(__always)
    static func limit(_ x: Float) -> Float {
        x > outputLimit ? outputLimit : (x < -outputLimit ? -outputLimit : x)
    }

    /// Next xorshift64* output.
    @inline(__always)
    mutating func nextRandom() -> UInt64 {
        rng ^= rng >> 12
        rng ^= rng << 25
        rng ^= rng >> 27
        return rng &* 0x2545_F491_4F6C_DD1D
    }

    /// Uniform in [0, 1).
    @inline(__always)
    mutating func nextUnit() -> Double { Double(nextRandom() >> 11) * 0x1p-53 }

    /// Uniform in [−1, 1).
    @inline(__always)
    mutating func nextBipolar() -> Double { nextUnit() * 2 - 1 }

    /// Advances the syllable/phrase schedule at a syllable boundary.
    mutating func startSyllable() {
        if syllablesLeft == 0 {  // pause, then a new phrase
            pauseFramesLeft = Int((0.25 + 0.45 * nextUnit()) * sampleRate)
            syllablesLeft = 3 + Int(nextRandom() % 5)
            syllableIndex = 0
            phraseF0 = 150 + 50 * nextUnit()
        }
        syllablesLeft -= 1
        let seconds = 0.17 + 0.16 * nextUnit()  // mean 0.25 s: ≈ 4 syllables per second
        syllableStep = 1 / (seconds * sampleRate)
        syllablePosition = 0
        syllableAmplitude = 0.55 + 0.45 * nextUnit()
        vowelIndex = Int(nextRandom() % 5)
        let target = phraseF0 * (1 - 0.05 * Double(syllableIndex)) * (0.94 + 0.14 * nextUnit())
        f0Target = min(220, max(100, target))
        syllableIndex += 1
    }

    @inline(__always)
    mutating func nextVoiceSample() -> Double {
        // Envelope target: (4u(1−u))² over a syllable, 0 in pauses; then smoothed.
        var target = 0.0
        if pauseFramesLeft > 0 {
            pauseFramesLeft -= 1
        } else {
            if syllablePosition >= 1 || syllableStep == 0 { startSyllable() }
            let u = syllablePosition
            let bump = 4 * u * (1 - u)
            target = syllableAmplitude * bump * bump
            syllablePosition += syllableStep
        }
        envelope += envelopeSmoothing * (target - envelope)

        // Glottal oscillator: rotate the phasor by ω = 2π·f0/fs (Taylor series, ω < 0.2).
        f0 += glide * (f0Target - f0)
        let w = f0 * radiansPerHertz
        let w2 = w * w
        let cosW = 1 - w2 / 2 * (1 - w2 / 12 * (1 - w2 / 30 * (1 - w2 / 56)))
        let sinW = w * (1 - w2 / 6 * (1 - w2 / 20 * (1 - w2 / 42 * (1 - w2 / 72))))
        let re = phasorRe * cosW - phasorIm * sinW
        let im = phasorRe * sinW + phasorIm * cosW
        let k = 1.5 - 0.5 * (re * re + im * im)  // one Newton step keeps |z| = 1
        phasorRe = re * k
        phasorIm = im * k

        // Σ ρⁿ·sin(nθ) over n ≥ 1 = ρ·sinθ / (1 − 2ρ·cosθ + ρ²), scaled to a peak of 1.
        let rho = Self.harmonicRatio
        let source = (1 - rho * rho) * phasorIm / (1 - 2 * rho * phasorRe + rho * rho)

        // Formants: three resonators in cascade.
        let vowel: Vowel
        switch vowelIndex {
        case 0: vowel = vowels.0
        case 1: vowel = vowels.1
        case 2: vowel = vowels.2
        case 3: vowel = vowels.3
        default: vowel = vowels.4
        }
        let y1 = vowel.r1.a * source + vowel.r1.b * f1y1 + vowel.r1.c * f1y2
        f1y2 = f1y1
        f1y1 = y1
        let y2 = vowel.r2.a * y1 + vowel.r2.b * f2y1 + vowel.r2.c * f2y2
        f2y2 = f2y1
        f2y1 = y2
        let y3 = vowel.r3.a * y2 + vowel.r3.b * f3y1 + vowel.r3.c * f3y2
        f3y2 = f3y1
        f3y1 = y3
        return Self.voiceGain * vowel.gain * envelope * y3
    }
}
