// The per-sample recurrences of the standard meters (`BallisticMeter`, constants in
// Ballistics.swift): the reading never depends on how the samples were split into blocks.
// Compiler-checked, realtime-safe; micmon runs them on the analysis thread (which costs the
// process thread nothing; docs/benchmarks.md), any single thread may.

extension BallisticMeter {
    /// Meters `count` samples, `stride` floats apart (the channel count for interleaved frames).
    /// Non-finite samples read as silence. Realtime-safe.
    @_noLocks @_noAllocation
    public mutating func process(
        _ samples: UnsafePointer<Float>, count: Int, stride: Int = 1, coefficients c: BallisticCoefficients
    ) {
        switch c.type {
        case .peak: return
        case .ppm1, .ppm2a, .ppm2b: processPPM(samples, count: count, stride: stride, c)
        case .vu: processVU(samples, count: count, stride: stride, c)
        case .k12, .k14, .k20: processK(samples, count: count, stride: stride, c)
        }
        if level > maxLevel { maxLevel = level }
    }

    /// |x| into two peak followers (each charges toward |x| by its weight when |x| is above it,
    /// and falls back by `release` every sample); the reading is their weighted sum, so short
    /// bursts read as the standard's table says.
    @_noLocks @_noAllocation
    mutating func processPPM(_ samples: UnsafePointer<Float>, count: Int, stride: Int, _ c: BallisticCoefficients) {
        var z1 = fast
        var z2 = slow
        var high = level
        var i = 0
        while i < count {
            // SAFETY: the caller passes `count` samples.
            let raw = Double(samples[i &* stride])
            let x = raw.isFinite ? abs(raw) : 0
            z1 *= c.release
            z2 *= c.release
            if x > z1 { z1 += c.fastAttack * (x - z1) }
            if x > z2 { z2 += c.slowAttack * (x - z2) }
            let y = c.calibration * (c.fastWeight * z1 + (1 - c.fastWeight) * z2)
            if y > high { high = y }
            i &+= 1
        }
        // Flush to zero far below the scale, so silence never leaves denormals behind.
        fast = z1 < 1e-12 ? 0 : z1
        slow = z2 < 1e-12 ? 0 : z2
        level = c.calibration * (c.fastWeight * fast + (1 - c.fastWeight) * slow)
        maxLevel = max(maxLevel, high)
    }

    /// The full-wave rectified signal (× π/2, so a steady sine reads its peak) drives a
    /// second-order movement: position `fast`, velocity `slow`.
    @_noLocks @_noAllocation
    mutating func processVU(_ samples: UnsafePointer<Float>, count: Int, stride: Int, _ c: BallisticCoefficients) {
        var position = fast
        var velocity = slow
        var high = maxLevel
        var i = 0
        while i < count {
            // SAFETY: the caller passes `count` samples.
            let raw = Double(samples[i &* stride])
            let u = raw.isFinite ? abs(raw) * (Double.pi / 2) : 0
            velocity += c.springPerSample * (u - position) - c.dampingPerSample * velocity
            position += c.secondsPerSample * velocity
            if position > high { high = position }
            i &+= 1
        }
        maxLevel = high
        fast = abs(position) < 1e-12 ? 0 : position
        slow = abs(velocity) < 1e-12 ? 0 : velocity
        level = max(position, 0)
    }

    /// Mean square with the K time constant (`level` is 2·⟨x²⟩, read in dB as power: AES17, a
    /// sine reads its peak),
    /// and the sample peak with a 20 dB / 1.7 s fall-back for the peak section.
    @_noLocks @_noAllocation
    mutating func processK(_ samples: UnsafePointer<Float>, count: Int, stride: Int, _ c: BallisticCoefficients) {
        var meanSquare = fast
        var peakLevel = slow
        var high = maxLevel
        var i = 0
        while i < count {
            // SAFETY: the caller passes `count` samples.
            let raw = Double(samples[i &* stride])
            let x = raw.isFinite ? raw : 0
            meanSquare += c.meanSquareGain * (x * x - meanSquare)
            peakLevel *= c.release
            if abs(x) > peakLevel { peakLevel = abs(x) }
            if 2 * meanSquare > high { high = 2 * meanSquare }
            i &+= 1
        }
        maxLevel = high
        fast = meanSquare < 1e-24 ? 0 : meanSquare
        slow = peakLevel < 1e-12 ? 0 : peakLevel
        level = 2 * fast
        peak = slow
    }
}
