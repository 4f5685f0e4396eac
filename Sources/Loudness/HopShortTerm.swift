// libebur128's short-term loudness at each 100 ms hop, at a cost that does not grow with the
// 3 s window: from the energy of each hop alone (read once, at the hop) instead of the library's
// sum over the whole window at every reading. Pure arithmetic; any one thread (the thread that
// owns the programme's `LoudnessMeter`).

import CEbur128

/// The short-term loudness of one programme at its latest hop, from its hops' energies.
///
/// libebur128 keeps the K-weighted samples of the last 3 s (zeros before the first) and reads
/// the short-term loudness as the mean energy of the last 30 hops' samples. Read at a hop, its
/// 100 ms window is the hop just ended, so the mean of the last 30 such readings is that same
/// mean energy. The library sums the 144 000 squares (at 48 kHz) in one run, this sums 30 sums
/// of 4 800: the two differ only by rounding, within 1e-12 relative (`HopShortTermTests`
/// checks 1e-9 LU), far below the 0.1 LU the live display and JSON lines show.
public struct HopShortTerm: Sendable, Equatable {
    /// The mean energies of the last `window` hops, by hop number modulo `window` (0 before the first).
    private var energies: [Double]
    /// Hops noted so far.
    public private(set) var hops = 0
    /// Hops in libebur128's short-term window (3 s).
    static let window = 30

    public init() {
        energies = Array(repeating: 0, count: Self.window)
    }

    /// Notes the loudness of the hop just ended (libebur128's 100 ms window read at the hop), in
    /// order, once per hop.
    public mutating func noteHop(lufs: Double) {
        energies[hops % Self.window] = ShortTermScreen.energy(ofLUFS: lufs)
        hops += 1
    }

    /// The short-term loudness at the last hop noted, LUFS (-∞ before any energy, as libebur128's).
    public var lufs: Double {
        var sum = 0.0
        // Oldest first, as the library sums a window that has not wrapped.
        for back in stride(from: Self.window, through: 1, by: -1) {
            sum += energies[(hops - back + Self.window) % Self.window]
        }
        let energy = sum / Double(Self.window)
        return energy > 0 ? micmon_ebur128_energy_to_loudness(energy) : -.infinity
    }
}
