// Clip indicators that stay lit until reset: the counts the screen shows, measured from the last
// reset. A value the main thread owns; pure.

/// The screen's clip and non-finite counts since the last `resetClips`. The meters count clips
/// for the whole session (the JSON and the summary keep those totals); the screen shows a
/// channel's `CLIP n` from its first clip until someone resets it, then from the next clip.
public struct ClipLatch: Sendable, Equatable {
    /// Each channel's counts at the last reset, by position; empty before the first.
    private var clipsAtReset: [UInt64] = []
    private var nonFiniteAtReset: [UInt64] = []

    public init() {}

    /// From now on, the screen counts `channels`' clips from their present totals.
    public mutating func resetClips(_ channels: [ChannelDisplay]) {
        clipsAtReset = channels.map(\.clipCount)
        nonFiniteAtReset = channels.map(\.nonFiniteCount)
    }

    /// `channels` with the counts since the last reset (a channel added since counts from 0).
    public func shown(_ channels: [ChannelDisplay]) -> [ChannelDisplay] {
        channels.enumerated().map { index, channel in
            var shown = channel
            if index < clipsAtReset.count {
                let clips = clipsAtReset[index]
                let nonFinite = nonFiniteAtReset[index]
                shown.clipCount = channel.clipCount >= clips ? channel.clipCount - clips : channel.clipCount
                shown.nonFiniteCount =
                    channel.nonFiniteCount >= nonFinite ? channel.nonFiniteCount - nonFinite : channel.nonFiniteCount
            }
            return shown
        }
    }
}
