/// A line of text in runs that may carry an ANSI SGR style, rendered with or without colour
/// and cut to a number of columns without ever cutting an escape sequence. Pure; any thread.
struct StyledLine {
    /// SGR parameters: "32" green, "33" yellow, "31" red, "1;31" bold red, "2" dim.
    typealias Style = String

    private(set) var runs: [(text: String, style: Style?)] = []

    mutating func add(_ text: String, _ style: Style? = nil) {
        if let last = runs.last, last.style == style {
            runs[runs.count - 1].text += text
        } else {
            runs.append((text, style))
        }
    }

    /// Appends the runs of `other`, styles kept.
    mutating func add(_ other: StyledLine) {
        for run in other.runs { add(run.text, run.style) }
    }

    /// Visible width in columns (one per Character; the renderers use no wide characters).
    var width: Int { runs.reduce(0) { $0 + $1.text.count } }

    /// The text, cut to `columns`, with escapes only when `color` and a reset after any style.
    func rendered(color: Bool, columns: Int) -> String {
        var out = ""
        var left = max(0, columns)
        var styled = false
        for run in runs where left > 0 {
            let text = run.text.count > left ? String(run.text.prefix(left)) : run.text
            left -= text.count
            if color {
                if let style = run.style {
                    out += "\u{1B}[0;\(style)m"
                    styled = true
                } else if styled {
                    out += "\u{1B}[0m"
                    styled = false
                }
            }
            out += text
        }
        if styled { out += "\u{1B}[0m" }
        return out
    }
}
