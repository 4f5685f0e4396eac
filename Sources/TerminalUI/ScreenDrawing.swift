// Redrawing the live capture screen in place, at the terminal's size of the moment. A value the
// main thread owns; pure (it returns the text to write).

/// The live screen's drawing: each redraw moves up over the last one and draws over it, and
/// clears what a longer drawing left below. When the terminal's size changed since the last
/// drawing, the terminal has rewrapped or cut those lines, so moving up by their count would
/// land in the wrong row: then the screen is cleared and the drawing starts at its top.
public struct ScreenDrawing: Sendable, Equatable {
    /// Cursor home, then erase the whole screen.
    static let clearScreen = "\u{1B}[H\u{1B}[2J"
    /// Erase from the cursor to the end of the screen.
    static let clearBelow = "\u{1B}[J"

    private var linesOnScreen = 0
    private var drawnColumns = 0
    private var drawnRows: Int?

    public init() {}

    /// The text that replaces the last drawing with `lines`, drawn for a terminal of `columns`
    /// × `rows` (nil: rows unknown).
    public mutating func redraw(_ lines: [String], columns: Int, rows: Int?) -> String {
        var text = ""
        if linesOnScreen > 0 {
            let resized = columns != drawnColumns || rows != drawnRows
            text = resized ? Self.clearScreen : "\u{1B}[\(linesOnScreen)A"
        }
        for line in lines { text += LiveScreen.clearLine + line + "\n" }
        text += Self.clearBelow
        linesOnScreen = lines.count
        drawnColumns = columns
        drawnRows = rows
        return text
    }

    /// Something else was printed below the drawing: the next one starts afresh under it.
    public mutating func forgetDrawing() { linesOnScreen = 0 }
}
