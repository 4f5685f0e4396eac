/// The periodic broadband signal `micmon latency` emits to measure a round trip: one period of a
/// Schroeder-phase multitone (a chirp that sweeps the band once per period), defined by its
/// spectrum so that its circular autocorrelation is a narrow, symmetric peak.
///
/// - Period `N` (a power of two, 4096 by default: 85 ms at 48 kHz).
/// - Bins 1 … 0.40·N at equal magnitude, a raised-cosine taper to zero at 0.48·N (nothing near
///   Nyquist, where converters' filters roll off and alias), no DC.
/// - Phases φₖ = −π·k²/K (Schroeder), which keeps the crest factor low (≈ 1.6): the peak is
///   `amplitude` and the RMS about 0.6 × that.
///
/// Built once, off the realtime thread; the realtime side only copies `samples`.
public struct MeasurementSignal: Sendable {
    /// Samples per period (a power of two).
    public let period: Int
    /// Peak amplitude of the emitted signal (linear, full scale = 1).
    public let amplitude: Float
    /// One period, as emitted (peak = `amplitude`).
    public let samples: [Float]
    /// The highest bin with full magnitude and the highest bin with any energy.
    public let flatBandEnd: Int
    public let bandEnd: Int

    /// One period of `period` samples (a power of two ≥ 256) with peak `amplitude`.
    public init(period: Int = 4096, amplitude: Float = 0.5) {
        precondition(
            period >= 256 && period.nonzeroBitCount == 1, "the measurement period must be a power of two ≥ 256")
        precondition(amplitude > 0 && amplitude <= 1)
        self.period = period
        self.amplitude = amplitude
        flatBandEnd = period * 40 / 100
        bandEnd = period * 48 / 100
        let transform = FourierTransform(size: period)
        var real = [Double](repeating: 0, count: period)
        var imaginary = [Double](repeating: 0, count: period)
        let span = Double(bandEnd)
        for k in 1 ... bandEnd {
            var magnitude = 1.0
            if k > flatBandEnd {
                let x = Double(k - flatBandEnd) / Double(bandEnd - flatBandEnd)
                magnitude = 0.5 * (1 + DSPMath.cos(Double.pi * x))
            }
            let phase = -Double.pi * Double(k) * Double(k) / span
            let (s, c) = DSPMath.sinCos(phase)
            real[k] = magnitude * c
            imaginary[k] = magnitude * s
            real[period - k] = magnitude * c
            imaginary[period - k] = -magnitude * s
        }
        real.withUnsafeMutableBufferPointer { re in
            imaginary.withUnsafeMutableBufferPointer { im in
                transform.transform(re.baseAddress!, im.baseAddress!, inverse: true)
            }
        }
        var peak = 0.0
        for value in real { peak = max(peak, value.magnitude) }
        let scale = Double(amplitude) / peak
        samples = real.map { Float($0 * scale) }
    }

    /// The emitted sample at `frame` frames after the first (the signal repeats every period).
    @inlinable
    public func value(at frame: Int) -> Float { samples[frame & (period - 1)] }
}
