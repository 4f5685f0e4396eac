/// Linear ↔ dBFS conversions. Any thread except the realtime one (they call `log10`).
///
/// Convention: 0 dBFS is a full-scale square wave (or DC at ±1.0). A full-scale sine therefore
/// reads 0.00 dBFS peak and −3.01 dBFS RMS; AES17 references RMS to the sine instead and would
/// read 3.01 dB higher (`aes17Offset`). Silence reads `floor`.
public enum Decibels {
    /// The reading for silence and anything quieter than it: −160 dB, as AVFoundation's meters.
    public static let floor: Double = -160
    /// Add to an RMS reading in this convention to get AES17 dB (full-scale sine = 0 dB): 20·DSPMath.log10(√2).
    public static let aes17Offset: Double = 3.010299956639812

    /// 20·DSPMath.log10(amplitude), or `floor` for amplitudes at or below 10^(−8) and for NaN/∞.
    /// The linear gain of `decibels` (0 dB → exactly 1). Any thread but the realtime one.
    public static func gain(decibels: Double) -> Double {
        decibels == 0 ? 1 : DSPMath.amplitude(decibels: decibels)
    }

    public static func amplitudeToDBFS(_ amplitude: Double) -> Double {
        guard amplitude > 1e-8, amplitude.isFinite else { return floor }
        return 20 * DSPMath.log10(amplitude)
    }

    /// 10·DSPMath.log10(meanSquare), or `floor` for mean squares at or below 10^(−16) and for NaN/∞.
    public static func meanSquareToDBFS(_ meanSquare: Double) -> Double {
        guard meanSquare > 1e-16, meanSquare.isFinite else { return floor }
        return 10 * DSPMath.log10(meanSquare)
    }
}

/// One channel's meters as the realtime thread publishes them (through a latest-value mailbox)
/// and the UI reads them: linear values plus the session totals. Plain bits.
public struct MeterReading: Sendable, BitwiseCopyable, Equatable {
    /// Ballistic peak, linear.
    public var peak: Double
    /// Peak hold, linear.
    public var hold: Double
    /// Integrated mean square (300 ms by default), linear power.
    public var meanSquare: Double
    /// Highest |x| since start.
    public var maxPeak: Double
    /// Samples with |x| ≥ 1.0 since start.
    public var clipCount: UInt64
    /// Σx² since start.
    public var sumOfSquares: Double
    /// Samples metered since start.
    public var frameCount: UInt64
    /// NaN and ±∞ samples since start (also in `clipCount`; metered as silence).
    public var nonFiniteCount: UInt64

    @inlinable
    public init(
        peak: Double = 0, hold: Double = 0, meanSquare: Double = 0, maxPeak: Double = 0,
        clipCount: UInt64 = 0, sumOfSquares: Double = 0, frameCount: UInt64 = 0, nonFiniteCount: UInt64 = 0
    ) {
        self.nonFiniteCount = nonFiniteCount
        self.peak = peak
        self.hold = hold
        self.meanSquare = meanSquare
        self.maxPeak = maxPeak
        self.clipCount = clipCount
        self.sumOfSquares = sumOfSquares
        self.frameCount = frameCount
    }
}

extension MeterReading {
    // dB views for the UI thread (they call log10).

    /// Ballistic peak in dBFS.
    public var peakDBFS: Double { Decibels.amplitudeToDBFS(peak) }
    /// Peak hold in dBFS.
    public var holdDBFS: Double { Decibels.amplitudeToDBFS(hold) }
    /// Integrated RMS in dBFS (full-scale sine = −3.01).
    public var rmsDBFS: Double { Decibels.meanSquareToDBFS(meanSquare) }
    /// Highest sample since start in dBFS.
    public var maxPeakDBFS: Double { Decibels.amplitudeToDBFS(maxPeak) }
    /// RMS over the whole session in dBFS (Σx² / frames), `Decibels.floor` before any frame.
    public var meanRMSDBFS: Double {
        frameCount == 0 ? Decibels.floor : Decibels.meanSquareToDBFS(sumOfSquares / Double(frameCount))
    }
}
