// Elementary functions in plain Swift, for initialisers and dB conversions.
//
// DSP imports nothing but the standard library, and the standard library's math (`_exp`,
// `_log10`, even `Double.rounded()` and, in debug builds, `squareRoot()`) lowers to libm
// calls that only link when some module imports Glibc. So DSP carries its own: accurate to
// a few ulps over the ranges used here. They live in `DSPMath` so they never clash with
// Glibc's functions of the same names.

/// Elementary functions without libm. Any thread, but they are loops and branches: kernels
/// precompute with them instead of calling them.
enum DSPMath {
    /// Nearest integer, halves away from zero (`rounded()` without libm). |x| < 2^62.
    @inline(__always) static func roundToInt(_ x: Double) -> Int {
        x >= 0 ? Int(x + 0.5) : -Int(-x + 0.5)
    }

    /// ln 2 split in a high part with trailing zero bits and a low remainder (fdlibm's constants).
    @inline(__always) static var ln2Hi: Double { 6.93147180369123816490e-01 }
    @inline(__always) static var ln2Lo: Double { 1.90821492927058770002e-10 }

    /// e^x. Relative error ≲ 2e-16; 0 below −745, +∞ above 709.8, NaN for NaN.
    static func exp(_ x: Double) -> Double {
        if x.isNaN { return x }
        if x > 709.78 { return .infinity }
        if x < -745.2 { return 0 }
        // x = k·ln2 + r, |r| ≤ ln2/2; e^r by its Taylor series (r^18/18! < 2e-25).
        let k = roundToInt(x * 1.4426950408889634)
        let r = (x - Double(k) * ln2Hi) - Double(k) * ln2Lo
        var term = 1.0
        var sum = 1.0
        for n in 1 ... 17 {
            term *= r / Double(n)
            sum += term
        }
        // 2^k in two steps so subnormal results stay exact-ish.
        let half = k / 2
        return sum * Double(sign: .plus, exponent: half, significand: 1)
            * Double(sign: .plus, exponent: k - half, significand: 1)
    }

    /// Natural logarithm. −∞ for 0, NaN for negatives and NaN, +∞ for +∞.
    static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x == .infinity { return x }
        // x = m·2^e with m in [√½, √2); ln m = 2·atanh(s), s = (m−1)/(m+1), |s| ≤ 0.172.
        var e = Int(x.exponent)
        var m = x.significand  // [1, 2)
        if m > 1.4142135623730951 {
            m /= 2
            e += 1
        }
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var power = s
        var sum = 0.0
        var n = 1.0
        while n < 30 {  // s^31/31 < 1e-25
            sum += power / n
            power *= s2
            n += 2
        }
        return Double(e) * ln2Hi + (Double(e) * ln2Lo + 2 * sum)
    }

    /// log10(x), with `log`'s special values.
    static func log10(_ x: Double) -> Double { log(x) * 0.43429448190325176 }

    /// 10^(x/20): decibels to a linear amplitude ratio.
    static func amplitude(decibels x: Double) -> Double { exp(x * (2.302585092994046 / 20)) }

    /// sin x and cos x for moderate |x| (≲ 1e6; accuracy degrades with |x| as the reduction is
    /// a plain multiple of 2π/4).
    static func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
        // x = q·π/2 + r, |r| ≤ π/4, π/2 split in two parts for the reduction.
        let q = roundToInt(x * 0.6366197723675814)
        let r = (x - Double(q) * 1.5707963267341256) - Double(q) * 6.077100506506192e-11
        let r2 = r * r
        var s = 0.0
        var c = 0.0
        var ts = r
        var tc = 1.0
        var n = 0.0
        while n < 22 {  // (π/4)^24/24! < 1e-25
            s += ts
            c += tc
            ts *= -r2 / ((n + 2) * (n + 3))
            tc *= -r2 / ((n + 1) * (n + 2))
            n += 2
        }
        switch q & 3 {
        case 0: return (s, c)
        case 1: return (c, -s)
        case 2: return (-s, -c)
        default: return (-c, s)
        }
    }

    static func sin(_ x: Double) -> Double { sinCos(x).sin }
    static func cos(_ x: Double) -> Double { sinCos(x).cos }

    /// √x for x ≥ 0 (NaN below): `Double.squareRoot()` links to libm's `sqrt` in debug builds.
    static func squareRoot(_ x: Double) -> Double {
        guard x > 0 else { return x == 0 ? 0 : .nan }
        if x == .infinity { return x }
        var y = exp(0.5 * log(x))
        y = 0.5 * (y + x / y)  // one Newton step polishes the last bits
        return y
    }
}
