import Engine
import Platform

/// The share of this VM's processor time the hypervisor gave to others ("steal", the eighth
/// field of /proc/stat's `cpu` line), between two readings. On a shared VM, takes that ran while
/// the host stole time are not comparable with takes that did not: the JACK cycle then misses
/// its deadlines (xruns) and every client's cost per period rises, unevenly. Main thread.
struct HostSteal {
    /// Summed jiffies of all processors: steal, and every state together.
    let steal: UInt64
    let total: UInt64

    /// Now, or nil when /proc/stat cannot be read (not Linux, or no steal field).
    static func now() -> HostSteal? {
        let text = readText("/proc/stat")
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 8 else { return nil }
        return HostSteal(steal: fields[7], total: fields.reduce(0, +))
    }

    /// Percent of all processors' time stolen between `earlier` and this reading (0 … 100).
    func percentSince(_ earlier: HostSteal) -> Double? {
        guard total > earlier.total else { return nil }
        return Double(steal &- earlier.steal) / Double(total - earlier.total) * 100
    }
}
