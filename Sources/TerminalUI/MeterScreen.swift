// The capture screen a person reads on a terminal: the bars with a dB scale under them, channel
// labels, the loudness and true-peak lines and the status line, laid out for any number of
// channels in the terminal's columns and rows. Pure functions of their arguments; any thread
// (the main thread calls them about 20 times a second).

/// The live capture screen. With room (at least `fullLayoutMinimumWidth` columns and a row for
/// every channel, the scale, each loudness programme and the status), the full layout, at 80
/// columns:
///
///     primary   █████████████████████████████████▒▒▒▒▒▒▒|·   -3.2  -12.1 dB CLIP 3
///     reference ██████████████████▒▒▒▒▒▒▒▒········|·······  -20.4  -31.0 dB
///               -60    -50    -40    -30    -20    -10    0   peak    rms
///     primary   M -23.1  S -22.9  I -23.0 LUFS  LRA  4.2 LU  TP  -1.3 dBTP  corr +0.93
///     reference M -31.0  S -30.8  I -30.9 LUFS  LRA  3.9 LU  TP -12.0 dBTP
///     01:12.3  REC 3472800 frames  xruns 0  dropped 0  48000 Hz  take.wav
///
/// Narrower, or too short for that, the compact layout: one short line per channel (name, bar,
/// peak, `C` for a clip, `N` for non-finite samples), in as many columns as the width allows,
/// a scale under each column, one loudness line (the first programme, and a count of the
/// others with the highest true peak among them) and the status line. The full layout too
/// shows that count in place of the programmes it has no rows for. When even that cannot
/// show every channel, the last cell says how many are not shown and how many of them clip.
/// Lines never exceed `width`; there are never more than `height − 1` of them (the cursor
/// rests on the row below the drawing, so nothing scrolls).
public enum MeterScreen {
    /// Narrower than this, the screen is compact.
    public static let fullLayoutMinimumWidth = 50
    /// Columns between two columns of channels in the compact layout.
    static let columnGap = 2
    /// Narrowest bar in a compact cell.
    static let compactMinimumBar = 6
    /// A compact cell's fixed part after the name: space, bar, " -12.3" (peak), " C" (marker).
    static let compactFixedWidth = 1 + 7 + 2

    /// How the channels are laid out.
    public enum Layout: Equatable, Sendable {
        /// A line per channel with peak and RMS, a line per loudness programme.
        case full
        /// `columns` columns of `rows` short channel lines; `shown` channels fit (a last cell
        /// counts the others when fewer than all).
        case compact(columns: Int, rows: Int, shown: Int)
    }

    /// What fits in `width` × `height` (nil: no limit on rows).
    public static func layout(channelCount: Int, programmeCount: Int, width: Int, height: Int?) -> Layout {
        let available = drawableRows(height)
        let fullRows = channelCount + 2 + (programmeCount > 0 ? 1 : 0)
        if width >= fullLayoutMinimumWidth && fullRows <= available { return .full }
        let rows = max(1, available - compactExtraRows(available: available, hasLoudness: programmeCount > 0))
        let wanted = max(1, (channelCount + rows - 1) / rows)
        let fitting = max(1, (width + columnGap) / (compactMinimumCellWidth + columnGap))
        let columns = min(wanted, fitting)
        let slots = columns * rows
        let shown = channelCount <= slots ? channelCount : max(0, slots - 1)
        let usedRows = channelCount <= slots ? (channelCount + columns - 1) / columns : rows
        return .compact(columns: columns, rows: usedRows, shown: shown)
    }

    /// The screen's lines, each at most `width` columns, at most `height − 1` of them.
    public static func lines(
        channels: [ChannelDisplay], status: MeterStatus, width: Int, height: Int?, color: Bool
    ) -> [String] {
        let programmes = status.loudness?.programmes ?? []
        let layout = layout(
            channelCount: channels.count, programmeCount: programmes.count, width: width, height: height)
        var out: [StyledLine]
        switch layout {
        case .full:
            out = fullLines(
                channels: channels, loudness: status.loudness, width: width,
                loudnessRows: drawableRows(height) - channels.count - 2)
        case .compact(let columns, let rows, let shown):
            let available = drawableRows(height)
            let extras = compactExtraRows(available: available, hasLoudness: !programmes.isEmpty)
            out = compactLines(
                channels: channels, loudness: status.loudness, width: width, columns: columns, rows: rows,
                shown: shown, withScale: extras >= (programmes.isEmpty ? 2 : 3),
                withLoudness: !programmes.isEmpty && extras >= 2)
        }
        if drawableRows(height) >= 1 { out.append(statusLine(status, width: width)) }
        return out.prefix(drawableRows(height)).map { $0.rendered(color: color, columns: width) }
    }

    /// Rows the drawing may use: one less than the terminal's, so the cursor's row below it
    /// never scrolls the top away.
    static func drawableRows(_ height: Int?) -> Int {
        guard let height else { return Int.max / 4 }
        return max(0, height - 1)
    }

    /// Rows the compact layout keeps for what is not a channel: the status line, then the
    /// loudness line, then the scale, each while a row is left for the channels.
    static func compactExtraRows(available: Int, hasLoudness: Bool) -> Int {
        let wanted = hasLoudness ? 3 : 2
        return max(0, min(wanted, available - 1))
    }

    static var compactMinimumCellWidth: Int { 4 + compactFixedWidth + compactMinimumBar }

    // MARK: Full layout

    static func fullLines(
        channels: [ChannelDisplay], loudness: LoudnessDisplay?, width: Int, loudnessRows: Int
    ) -> [StyledLine] {
        let longest = channels.map { TextFormat.printable($0.displayName).count }.max() ?? 4
        var nameWidth = min(max(longest, 4), 16)
        var bar = width - nameWidth - 1 - MeterRenderer.numbersWidth - MeterRenderer.clipWidth
        if bar < MeterRenderer.minimumBar {
            nameWidth = max(4, nameWidth - (MeterRenderer.minimumBar - bar))
            bar = width - nameWidth - 1 - MeterRenderer.numbersWidth - MeterRenderer.clipWidth
        }
        bar = max(0, bar)
        var out = channels.map { channel in
            var shown = channel
            shown.name = channel.displayName
            return MeterRenderer.channelLine(shown, nameWidth: nameWidth, bar: bar)
        }
        var scale = StyledLine()
        scale.add(String(repeating: " ", count: nameWidth + 1))
        scale.add(scaleText(bar: bar), "2")
        scale.add(" " + TextFormat.pad("peak", 6) + " " + TextFormat.pad("rms", 6), "2")
        out.append(scale)
        if let loudness {
            out += loudnessLines(loudness, channels, nameWidth: nameWidth, width: width, rows: loudnessRows)
        }
        return out
    }

    // MARK: Compact layout

    static func compactLines(
        channels: [ChannelDisplay], loudness: LoudnessDisplay?, width: Int, columns: Int, rows: Int, shown: Int,
        withScale: Bool, withLoudness: Bool
    ) -> [StyledLine] {
        let cellWidth = max(1, (width - columnGap * (columns - 1)) / columns)
        let longest = channels.prefix(shown).map { TextFormat.printable($0.displayName).count }.max() ?? 4
        let nameWidth = max(1, min(min(max(longest, 4), 10), cellWidth - compactFixedWidth - compactMinimumBar))
        let bar = max(0, cellWidth - nameWidth - compactFixedWidth)
        var out: [StyledLine] = []
        for row in 0 ..< rows {
            var line = StyledLine()
            for column in 0 ..< columns {
                let index = column * rows + row
                var cell = StyledLine()
                if index < shown {
                    cell = compactCell(channels[index], nameWidth: nameWidth, bar: bar)
                } else if index == shown && shown < channels.count {
                    cell.add(TextFormat.padRight(hiddenSummary(channels[shown...]), cellWidth), "1")
                } else {
                    continue
                }
                if column > 0 { line.add(String(repeating: " ", count: columnGap)) }
                cell.add(String(repeating: " ", count: max(0, cellWidth - cell.width)))
                line.add(cell)
            }
            out.append(line)
        }
        if withScale {
            var scale = StyledLine()
            let scaleColumns = rows > 0 ? min(columns, max(1, (shown + rows - 1) / rows)) : 1
            for column in 0 ..< scaleColumns {
                if column > 0 { scale.add(String(repeating: " ", count: columnGap)) }
                scale.add(String(repeating: " ", count: nameWidth + 1))
                scale.add(scaleText(bar: bar), "2")
                scale.add(TextFormat.padRight(column == 0 ? "  peak" : "", cellWidth - nameWidth - 1 - bar))
            }
            out.append(scale)
        }
        if withLoudness, let loudness {
            out += loudnessLines(loudness, channels, nameWidth: nameWidth, width: width, rows: 1)
        }
        return out
    }

    /// A line per programme when `rows` allow; else the first `rows − 1` and a line for the
    /// others (how many, and the highest true peak among them), or with one row the first
    /// programme with that count after it when it fits.
    static func loudnessLines(
        _ loudness: LoudnessDisplay, _ channels: [ChannelDisplay], nameWidth: Int, width: Int, rows: Int
    ) -> [StyledLine] {
        let programmes = labelled(loudness.programmes, channels)
        guard rows > 0, !programmes.isEmpty else { return [] }
        let shown = programmes.count <= rows ? programmes.count : max(1, rows - 1)
        var out = programmes.prefix(shown).enumerated().map { index, programme in
            loudnessLine(
                programme, correlation: index == 0 ? loudness.correlation : nil, nameWidth: nameWidth, width: width)
        }
        let others = programmes.dropFirst(shown)
        guard let loudest = others.max(by: { $0.truePeakDBTP < $1.truePeakDBTP }) else { return out }
        let more =
            "+\(others.count) more: max TP " + finite(loudest.truePeakDBTP) + " dBTP ("
            + TextFormat.printable(loudest.name) + ")"
        if rows > shown {
            var line = StyledLine()
            line.add(more)
            out.append(line)
        } else if out[0].width + 2 + more.count <= width {
            out[0].add("  " + more)
        }
        return out
    }

    /// `name ████▒▒|··· -12.3 C`: the bar, the peak, and `C` (clips) or `N` (non-finite samples).
    static func compactCell(_ channel: ChannelDisplay, nameWidth: Int, bar: Int) -> StyledLine {
        var cell = StyledLine()
        cell.add(TextFormat.padRight(TextFormat.printable(channel.displayName), nameWidth) + " ")
        MeterRenderer.addBar(channel, cells: bar, to: &cell)
        let peak = channel.isConnected ? TextFormat.decibels(channel.peakDBFS, decimals: 1) : "--"
        cell.add(" " + TextFormat.pad(peak, 6) + " ")
        if channel.nonFiniteCount > 0 {
            cell.add("N", "1;35")
        } else if channel.clipCount > 0 {
            cell.add("C", "1;31")
        } else {
            cell.add(" ")
        }
        return cell
    }

    /// "+12 more, 2 clip": the channels the compact layout has no room for.
    static func hiddenSummary(_ hidden: ArraySlice<ChannelDisplay>) -> String {
        let clipping = hidden.filter { $0.clipCount > 0 }.count
        return "+\(hidden.count) more" + (clipping > 0 ? ", \(clipping) clip" : "")
    }

    // MARK: Parts

    /// The renderer's status line, or where it does not fit, its short form without the frame
    /// count and the rate: `01:12.3 REC xruns 0 dropped 0 take.wav`.
    static func statusLine(_ status: MeterStatus, width: Int) -> StyledLine {
        let full = MeterRenderer.statusLine(status)
        guard full.width > width else { return full }
        var line = StyledLine()
        line.add(TextFormat.clock(status.elapsedSeconds) + " ")
        if status.isRecording { line.add("REC", "1;31") } else { line.add("meter") }
        if let reduction = status.noiseReductionDB { line.add(" NR " + TextFormat.fixed(reduction, decimals: 1)) }
        line.add(" ")
        line.add("xruns \(status.xruns)", status.xruns > 0 ? "33" : nil)
        line.add(" ")
        line.add("dropped \(status.framesDropped)", status.framesDropped > 0 ? "1;31" : nil)
        if status.isRecording, let file = status.fileName { line.add(" " + TextFormat.printable(file)) }
        if let trigger = status.triggerState { line.add(" " + trigger, trigger == "armed" ? "33" : nil) }
        return line
    }

    /// The programmes named as the screen names their channels: a programme that measures a
    /// labelled channel shows the label.
    static func labelled(
        _ programmes: [LoudnessDisplay.Programme], _ channels: [ChannelDisplay]
    ) -> [LoudnessDisplay.Programme] {
        programmes.map { programme in
            var shown = programme
            if let label = channels.first(where: { $0.name == programme.name })?.label { shown.name = label }
            return shown
        }
    }

    /// Tick labels under a bar of `bar` cells: every 10 dB when there is room, else every 20 or
    /// 30, else the two ends; each label centred on its tick (the boundary between the cells
    /// below and above it), kept inside the bar and never touching its neighbour.
    static func scaleText(bar: Int) -> String {
        guard bar > 0 else { return "" }
        let span = -MeterRenderer.scaleFloor
        let step = [10.0, 20.0, 30.0].first { Double(bar) * $0 / span >= 5 } ?? span
        var cells = [Character](repeating: " ", count: bar)
        var free = 0
        var level = MeterRenderer.scaleFloor
        while level <= 0.000_1 {
            let text = Array(level == 0 ? "0" : String(Int(level)))
            let tick = (level - MeterRenderer.scaleFloor) / span * Double(bar)
            var start = Int((tick - Double(text.count) / 2).rounded())
            start = max(0, min(bar - text.count, start))
            if start >= free && start + text.count <= bar {
                for (offset, character) in text.enumerated() { cells[start + offset] = character }
                free = start + text.count + 1
            }
            level += step
        }
        return String(cells)
    }

    /// One programme's loudness: `name M -23.1  S -22.9  I -23.0 LUFS  LRA 4.2 LU  TP -1.3 dBTP
    /// corr +0.93`. What does not fit `width` goes, least needed first (LRA, S, corr, M), so the
    /// integrated loudness and the true peak stay longest. A true peak above −1 dBTP (EBU R128's
    /// maximum) is bold red, a negative correlation (an inverted mic) yellow.
    static func loudnessLine(
        _ programme: LoudnessDisplay.Programme, correlation: Double?, nameWidth: Int, width: Int
    ) -> StyledLine {
        struct Field {
            var text: String
            var style: StyledLine.Style?
            /// Lower goes first when the line is too long.
            var keep: Int
        }
        var fields = [
            Field(text: "M " + decibelText(programme.momentaryLUFS), keep: 3),
            Field(text: "S " + decibelText(programme.shortTermLUFS), keep: 1),
            Field(text: "I " + decibelText(programme.integratedLUFS) + " LUFS", keep: 6),
            Field(text: "LRA " + TextFormat.pad(finite(programme.loudnessRangeLU), 4) + " LU", keep: 0),
            Field(
                text: "TP " + decibelText(programme.truePeakDBTP) + " dBTP",
                style: programme.truePeakDBTP > -1 ? "1;31" : nil, keep: 5),
        ]
        if let correlation {
            let sign = correlation >= 0 ? "+" : ""
            fields.append(
                Field(
                    text: "corr " + (correlation.isFinite ? sign + TextFormat.fixed(correlation, decimals: 2) : "--"),
                    style: correlation < 0 ? "33" : nil, keep: 2))
        }
        let name = TextFormat.padRight(TextFormat.printable(programme.name), nameWidth)
        func length(_ list: [Field]) -> Int { name.count + list.reduce(0) { $0 + 2 + $1.text.count } - 1 }
        while length(fields) > width, let drop = fields.indices.min(by: { fields[$0].keep < fields[$1].keep }) {
            if fields.count == 1 { break }
            fields.remove(at: drop)
        }
        var line = StyledLine()
        line.add(name)
        for (index, field) in fields.enumerated() {
            line.add(index == 0 ? " " : "  ")
            line.add(field.text, field.style)
        }
        return line
    }

    /// A loudness or level in one decimal, right-aligned in 5 columns; "--" when not measured yet.
    static func decibelText(_ value: Double) -> String { TextFormat.pad(finite(value), 5) }

    static func finite(_ value: Double) -> String {
        value.isFinite ? TextFormat.fixed(value, decimals: 1) : "--"
    }
}
