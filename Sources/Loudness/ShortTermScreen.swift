// Which 100 ms hops could hold a short-term loudness above the highest so far: a bound on
// libebur128's 3 s window from the momentary (400 ms) readings taken at every hop, so the 3 s
// sum is read only where it could raise the maximum. Pure arithmetic; any one thread (the
// thread that owns the programme's `LoudnessMeter`).

import CEbur128

/// The bound on one programme's short-term loudness at a hop, from its momentary readings.
///
/// libebur128 measures both windows over the same K-weighted samples, in whole 100 ms hops
/// (the momentary window is the last 4, the short-term window the last 30). With m(h) the mean
/// energy of the momentary window at hop h, seven momentary windows (h, h−4, …, h−24) tile the
/// newest 28 hops of the short-term window, and any one of m(h−26), m(h−27), m(h−28) covers the
/// oldest two, so s(h) ≤ (4 / 30)·(Σⱼ m(h − 4j) + min(m(h−26), m(h−27), m(h−28))): every
/// energy is a sum of squares, never negative. A hop whose bound is below the highest
/// short-term loudness so far cannot raise it; the maximum is then the one reading every hop
/// gives, bit for bit.
public struct ShortTermScreen: Sendable, Equatable {
    /// The momentary mean energies of the last `history` hops, by hop number modulo `history`.
    private var energies: [Double]
    /// Hops noted so far.
    public private(set) var hops = 0
    static let history = 32
    /// Relative slack on the bound for rounding: libebur128 sums the two windows' squares in
    /// different orders (at most 144 000 terms, each rounding within 2⁻⁵³), and the loudness it
    /// reports goes through a logarithm that the screen undoes.
    static let slack = 1e-6

    public init() {
        energies = Array(repeating: 0, count: Self.history)
    }

    /// libebur128's loudness (LUFS) of a mean energy turned back into the energy: L = 10·log10(z) − 0.691.
    static func energy(ofLUFS lufs: Double) -> Double {
        guard lufs.isFinite else { return lufs > 0 ? .infinity : 0 }
        return micmon_ebur128_exp((lufs + 0.691) / 10 * 2.302_585_092_994_045_684)
    }

    /// Notes the momentary loudness read at the next hop (call at every hop, in order).
    public mutating func noteMomentary(_ lufs: Double) {
        hops += 1
        energies[hops % Self.history] = Self.energy(ofLUFS: lufs)
    }

    /// Whether the short-term loudness at the hop just noted could be above `lufs`; true until
    /// 29 hops have been noted (the bound needs the momentary readings of the whole window).
    public func couldExceed(_ lufs: Double) -> Bool {
        guard hops >= 29, lufs.isFinite else { return true }
        func at(_ back: Int) -> Double { energies[(hops - back) % Self.history] }
        var sum = 0.0
        for tile in 0 ..< 7 { sum += at(4 * tile) }
        sum += min(at(26), at(27), at(28))
        let bound = sum * 4 / 30
        return bound * (1 + Self.slack) >= Self.energy(ofLUFS: lufs)
    }
}
