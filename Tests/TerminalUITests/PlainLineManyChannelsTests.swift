// The plain status line with many channels: summarised, not listed (MeterRenderer.plainLine).

import Testing

@testable import TerminalUI

@Suite struct PlainLineManyChannels {
    /// 64 channels: in_k peaks at −(k + 10) dBFS, except in_12 at −3.2 and in_5 at −6.0; in_2
    /// and in_9 clip, in_3 carried a NaN, in_60 and in_61 are disconnected.
    static func sixtyFour() -> [ChannelDisplay] {
        (1 ... 64).map { k in
            var peak = -Double(k + 10)
            if k == 12 { peak = -3.2 }
            if k == 5 { peak = -6.0 }
            return ChannelDisplay(
                name: "in_\(k)", peakDBFS: peak, holdDBFS: peak, rmsDBFS: peak - 10,
                clipCount: k == 2 ? 3 : k == 9 ? 1 : 0, nonFiniteCount: k == 3 ? 1 : 0,
                isConnected: k != 60 && k != 61)
        }
    }

    @Test func sixtyFourChannelsOnOneReadableLine() {
        let line = MeterRenderer.plainLine(channels: Self.sixtyFour(), status: recording)
        #expect(
            line
                == "01:12.3 | 64 ch peak -3.2 … -74.0 dBFS | loudest in_12 -3.2, in_5 -6.0, in_1 -11.0"
                + " | quietest in_64 -74.0 | clips 2 ch: in_2 3, in_9 1 | non-finite 1 ch: in_3 1"
                + " | disconnected 2 ch: in_60, in_61 | xruns 2 | dropped 0 | rec take.wav 3472800 frames")
        // Bounded whatever the count: no channel beyond the few named.
        #expect(line.count < 300)
        #expect(!line.contains("in_40"))
    }

    @Test func longListsAreCountedNotListed() {
        let clipping = (1 ... 20).map { k in
            ChannelDisplay(name: "in_\(k)", peakDBFS: 0, holdDBFS: 0, rmsDBFS: -3, clipCount: UInt64(k))
        }
        let line = MeterRenderer.plainLine(channels: clipping, status: metering)
        #expect(line.contains("| clips 20 ch: in_1 1, in_2 2, in_3 3, … +17 |"))
        // Equal peaks: the loudest in channel order; the quietest is the last of them.
        #expect(line.contains("| loudest in_1 0.0, in_2 0.0, in_3 0.0 | quietest in_20 0.0 |"))
    }

    @Test func labelsNameTheChannelsAndNaNLevelsSortAsSilence() {
        var channels = (1 ... 9).map { k in
            ChannelDisplay(name: "in_\(k)", peakDBFS: -20, holdDBFS: -20, rmsDBFS: -30)
        }
        channels[0].peakDBFS = .nan
        channels[4].label = "kick"
        channels[4].peakDBFS = -1
        let line = MeterRenderer.plainLine(channels: channels, status: metering)
        #expect(line.hasPrefix("00:01.2 | 9 ch peak -1.0 … -160.0 dBFS | loudest kick -1.0, in_2 -20.0, in_3 -20.0"))
        #expect(line.contains("| quietest in_1 -160.0 |"))
    }

    @Test func everyChannelDisconnected() {
        let channels = (1 ... 10).map { k in
            ChannelDisplay(name: "in_\(k)", peakDBFS: -160, holdDBFS: -160, rmsDBFS: -160, isConnected: false)
        }
        #expect(
            MeterRenderer.plainLine(channels: channels, status: metering)
                == "00:01.2 | 10 ch | disconnected 10 ch: in_1, in_2, in_3, … +7 | xruns 0 | dropped 0 | not recording")
    }

    @Test func eightChannelsAreStillListedInFull() {
        let channels = Array(Self.sixtyFour().prefix(8))
        let line = MeterRenderer.plainLine(channels: channels, status: recording)
        #expect(line.contains("| in_8 peak -18.0 rms -28.0 dBFS |"))
        #expect(!line.contains("loudest"))
    }
}
