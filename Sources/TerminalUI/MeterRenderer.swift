/// Meter screens as text. Pure functions of their arguments; any thread (the UI thread calls
/// them about 20 times a second).
///
/// At `width` 80 (peak, RMS in dBFS after the bar; room for CLIP is kept on every line so
/// the bars line up):
///
///     in_1 █████████████████████████████████████▒▒▒▒▒▒▒|·   -3.2  -12.1 dB CLIP 3
///     in_2 ██████████████████████▒▒▒▒▒▒▒▒········|·······  -20.4  -31.0 dB
///     01:12.3  REC 3472800 frames  xruns 0  dropped 0  48000 Hz  take.wav
///
/// The bar spans −60…0 dBFS: `█` up to the RMS, `▒` on to the peak, `|` at the hold, `·` beyond.
/// With colour the cells are green below −18 dBFS, yellow to −6 dBFS, red above (by each
/// cell's centre), the hold marker bold, CLIP bold red. A channel that carried NaN or ±∞
/// samples shows `NAN n` (bold magenta) where CLIP goes: its levels read those samples as
/// silence, so the count is the only sign of them.
public enum MeterRenderer {
    /// Bottom of the bar scale, dBFS.
    public static let scaleFloor: Double = -60
    /// dBFS where the bar turns yellow.
    public static let yellowFrom: Double = -18
    /// dBFS where the bar turns red.
    public static let redFrom: Double = -6

    static let rmsCell: Character = "█"
    static let peakCell: Character = "▒"
    static let holdCell: Character = "|"
    static let emptyCell: Character = "·"
    /// Narrowest bar worth drawing; below it lines drop the bar.
    static let minimumBar = 10
    /// " -12.3  -45.6 dB": the two numbers after the bar.
    static let numbersWidth = 17
    /// " CLIP 99999+": reserved after the numbers so bars line up whether or not a channel clips.
    static let clipWidth = 12

    /// One line per channel, then the status line; each fits in `width` columns.
    public static func lines(channels: [ChannelDisplay], status: MeterStatus, width: Int, color: Bool) -> [String] {
        let longest = channels.map { TextFormat.printable($0.name).count }.max() ?? 4
        var nameWidth = min(max(longest, 4), 16)
        var bar = width - nameWidth - 1 - numbersWidth - clipWidth
        if bar < minimumBar {  // narrow: give the bar what the names can spare
            nameWidth = max(4, nameWidth - (minimumBar - bar))
            bar = width - nameWidth - 1 - numbersWidth - clipWidth
        }
        var out = channels.map { channel in
            channelLine(channel, nameWidth: nameWidth, bar: bar >= minimumBar ? bar : 0)
                .rendered(color: color, columns: width)
        }
        out.append(statusLine(status).rendered(color: color, columns: width))
        return out
    }

    /// Everything on one line without escapes, for a stdout that is not a terminal:
    ///
    ///     00:12.3 | in_1 peak -3.2 rms -12.1 dBFS | in_2 peak -6.0 rms -15.3 dBFS clips 3 non-finite 1 | xruns 0 | dropped 0 | rec take.wav 576000 frames
    ///
    /// A channel with a label names it after the port: `in_1 (primary) peak -3.2 …`.
    ///
    /// More than `plainChannelsInFull` channels do not fit on a line: the line then summarises
    /// them (`compactChannelParts`) instead of listing each.
    public static func plainLine(channels: [ChannelDisplay], status: MeterStatus) -> String {
        var parts = [TextFormat.clock(status.elapsedSeconds)]
        if channels.count > plainChannelsInFull {
            parts += compactChannelParts(channels)
        } else {
            parts += channels.map(plainChannelPart)
        }
        if let reduction = status.noiseReductionDB {
            parts.append("noise reduction " + TextFormat.fixed(reduction, decimals: 1) + " dB")
        }
        parts.append("xruns \(status.xruns)")
        parts.append("dropped \(status.framesDropped)")
        parts.append(recordingText(status))
        if let disk = status.disk { parts.append(disk.text) }
        return parts.joined(separator: " | ")
    }

    /// The most channels the plain line lists one by one (8: a drum kit's close mics still fit
    /// in about 400 columns); more are summarised.
    public static let plainChannelsInFull = 8
    /// How many channels the summary names by level (the loudest) and by count (clips, NaN, …).
    static let plainChannelsNamed = 3

    /// One channel of the plain line: `in_1 (primary) peak -3.2 rms -12.1 dBFS clips 3`.
    static func plainChannelPart(_ channel: ChannelDisplay) -> String {
        var part = TextFormat.printable(channel.name)
        if let label = channel.label { part += " (" + TextFormat.printable(label) + ")" }
        if channel.isConnected {
            part +=
                " peak " + TextFormat.decibels(channel.peakDBFS, decimals: 1)
                + " rms " + TextFormat.decibels(channel.rmsDBFS, decimals: 1) + " dBFS"
        } else {
            part += " disconnected"
        }
        if channel.clipCount > 0 { part += " clips \(channel.clipCount)" }
        if channel.nonFiniteCount > 0 { part += " non-finite \(channel.nonFiniteCount)" }
        return part
    }

    /// The channels of a plain line too many to list, in a few parts of bounded length, whatever
    /// the count:
    ///
    ///     64 ch peak -3.2 … -80.0 dBFS | loudest in_12 -3.2, in_5 -6.0, in_7 -9.1 | quietest in_40 -80.0
    ///     | clips 2 ch: in_2 3, in_9 1 | non-finite 1 ch: in_3 1 | disconnected 2 ch: in_60, in_61
    ///
    /// The range and the names are of the connected channels' peaks (a label shows instead of
    /// the port's name); the loudest `plainChannelsNamed` by peak, the quietest one; clips,
    /// non-finite samples and disconnected inputs name up to `plainChannelsNamed` channels (in
    /// channel order) and count the rest (`… +5`). The parts after the first appear only when
    /// they have something to say.
    static func compactChannelParts(_ channels: [ChannelDisplay]) -> [String] {
        func name(_ channel: ChannelDisplay) -> String { TextFormat.printable(channel.displayName) }
        func level(_ dBFS: Double) -> String { TextFormat.decibels(dBFS, decimals: 1) }
        /// Up to `plainChannelsNamed` entries, then how many more.
        func listed(_ entries: [String]) -> String {
            let shown = entries.prefix(plainChannelsNamed).joined(separator: ", ")
            return entries.count > plainChannelsNamed ? shown + ", … +\(entries.count - plainChannelsNamed)" : shown
        }
        let connected = channels.enumerated().filter { $0.element.isConnected }
        // Loudest first; equal peaks (and NaN, which sorts as silence) in channel order.
        let byPeak = connected.sorted { a, b in
            let x = a.element.peakDBFS.isNaN ? -Double.infinity : a.element.peakDBFS
            let y = b.element.peakDBFS.isNaN ? -Double.infinity : b.element.peakDBFS
            return x != y ? x > y : a.offset < b.offset
        }.map(\.element)
        var parts: [String] = []
        if let loudest = byPeak.first, let quietest = byPeak.last {
            parts.append(
                "\(channels.count) ch peak " + level(loudest.peakDBFS) + " … " + level(quietest.peakDBFS) + " dBFS")
            parts.append(
                "loudest "
                    + byPeak.prefix(plainChannelsNamed).map { name($0) + " " + level($0.peakDBFS) }
                    .joined(separator: ", "))
            if byPeak.count > plainChannelsNamed {
                parts.append("quietest " + name(quietest) + " " + level(quietest.peakDBFS))
            }
        } else {
            parts.append("\(channels.count) ch")
        }
        let clipping = channels.filter { $0.clipCount > 0 }
        if !clipping.isEmpty {
            parts.append("clips \(clipping.count) ch: " + listed(clipping.map { name($0) + " \($0.clipCount)" }))
        }
        let nonFinite = channels.filter { $0.nonFiniteCount > 0 }
        if !nonFinite.isEmpty {
            parts.append(
                "non-finite \(nonFinite.count) ch: " + listed(nonFinite.map { name($0) + " \($0.nonFiniteCount)" }))
        }
        let disconnected = channels.filter { !$0.isConnected }
        if !disconnected.isEmpty {
            parts.append("disconnected \(disconnected.count) ch: " + listed(disconnected.map(name)))
        }
        return parts
    }

    /// Number of bar cells lit for a level: −60 dBFS → 0, 0 dBFS → `bar`, rounded.
    static func cells(_ dBFS: Double, bar: Int) -> Int {
        guard !dBFS.isNaN else { return 0 }
        let fraction = max(0, min(1, (dBFS - scaleFloor) / -scaleFloor))
        return Int((fraction * Double(bar)).rounded())
    }

    /// Colour of a bar cell, by the dBFS at its centre.
    static func zone(cell: Int, bar: Int) -> StyledLine.Style {
        let centre = scaleFloor + -scaleFloor * (Double(cell) + 0.5) / Double(bar)
        return centre >= redFrom ? "31" : centre >= yellowFrom ? "33" : "32"
    }

    static func channelLine(_ channel: ChannelDisplay, nameWidth: Int, bar: Int) -> StyledLine {
        var line = StyledLine()
        line.add(TextFormat.padRight(TextFormat.printable(channel.name), nameWidth))
        if bar > 0 {
            line.add(" ")
            addBar(channel, cells: bar, to: &line)
        }
        if channel.isConnected {
            line.add(
                " " + TextFormat.pad(TextFormat.decibels(channel.peakDBFS, decimals: 1), 6)
                    + " " + TextFormat.pad(TextFormat.decibels(channel.rmsDBFS, decimals: 1), 6) + " dB")
        } else {
            line.add(" " + TextFormat.pad("--", 6) + " " + TextFormat.pad("--", 6) + " dB")
        }
        if channel.nonFiniteCount > 0 {
            line.add(" ")
            line.add("NAN " + (channel.nonFiniteCount > 99_999 ? "99999+" : String(channel.nonFiniteCount)), "1;35")
        } else if channel.clipCount > 0 {
            line.add(" ")
            line.add("CLIP " + (channel.clipCount > 99_999 ? "99999+" : String(channel.clipCount)), "1;31")
        }
        return line
    }

    /// The `bar` cells of a channel's bar: `█` to the RMS, `▒` to the peak, `|` at the hold.
    static func addBar(_ channel: ChannelDisplay, cells bar: Int, to line: inout StyledLine) {
        let rms = channel.isConnected ? cells(channel.rmsDBFS, bar: bar) : 0
        let peak = channel.isConnected ? max(rms, cells(channel.peakDBFS, bar: bar)) : 0
        let hold = channel.isConnected ? cells(channel.holdDBFS, bar: bar) - 1 : -1
        for i in 0 ..< bar {
            if i == hold {
                line.add(String(holdCell), "1;" + zone(cell: i, bar: bar))
            } else if i < rms {
                line.add(String(rmsCell), zone(cell: i, bar: bar))
            } else if i < peak {
                line.add(String(peakCell), zone(cell: i, bar: bar))
            } else {
                line.add(String(emptyCell), "2")
            }
        }
    }

    /// `01:12.3  REC 3472800 frames  xruns 2  dropped 0  48000 Hz  take.wav`: the file name
    /// last, as it is the longest and least urgent part when the line is cut.
    static func statusLine(_ status: MeterStatus) -> StyledLine {
        var line = StyledLine()
        line.add(TextFormat.clock(status.elapsedSeconds) + "  ")
        if status.isRecording {
            line.add("REC", "1;31")
            line.add(" \(status.framesRecorded) frames  ")
        } else {
            line.add("not recording  ")
        }
        if let reduction = status.noiseReductionDB {
            line.add("NR " + TextFormat.fixed(reduction, decimals: 1) + " dB  ")
        }
        line.add("xruns \(status.xruns)", status.xruns > 0 ? "33" : nil)
        line.add("  ")
        line.add("dropped \(status.framesDropped)", status.framesDropped > 0 ? "1;31" : nil)
        line.add("  \(status.sampleRate) Hz")
        if let disk = status.disk { line.add("  " + disk.text) }
        if status.isRecording, let file = status.fileName { line.add("  " + TextFormat.printable(file)) }
        if let trigger = status.triggerState { line.add("  " + trigger) }
        return line
    }

    static func recordingText(_ status: MeterStatus) -> String {
        guard status.isRecording else { return "not recording" }
        let name = status.fileName.map { TextFormat.printable($0) + " " } ?? ""
        return "rec " + name + "\(status.framesRecorded) frames"
    }
}
