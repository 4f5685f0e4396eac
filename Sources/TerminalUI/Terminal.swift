// The one file of TerminalUI that looks at the process: is stdout a terminal, may it have
// colour, how big it is. Everything else in the module is a pure function of its arguments.
import Platform

/// What the output stream can show.
public struct TerminalInfo: Sendable, Equatable {
    /// The stream is a terminal (`isatty`).
    public var isTTY: Bool
    /// ANSI colour may be used.
    public var color: Bool
    /// Columns to render into: `COLUMNS` when set to a positive number, else the terminal's
    /// width, else 80.
    public var columns: Int

    public init(isTTY: Bool, color: Bool, columns: Int) {
        self.isTTY = isTTY
        self.color = color
        self.columns = columns
    }
}

public enum Terminal {
    /// Colour only on a terminal, never with a non-empty `NO_COLOR` (no-color.org), never when
    /// `TERM` is unset or `dumb`. Pure; any thread.
    public static func colorEnabled(isTTY: Bool, environment: [String: String]) -> Bool {
        guard isTTY else { return false }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
        guard let term = environment["TERM"], !term.isEmpty, term != "dumb" else { return false }
        return true
    }

    /// `COLUMNS` when it is a positive integer, else 80. Pure; any thread.
    public static func columns(environment: [String: String]) -> Int {
        if let text = environment["COLUMNS"], let n = Int(text), n > 0 { return n }
        return 80
    }

    /// Looks at `fileDescriptor` (default stdout) and the environment. Any thread but the
    /// realtime one.
    public static func detect(fileDescriptor: Int32 = 1) -> TerminalInfo {
        var environment: [String: String] = [:]
        for key in ["NO_COLOR", "TERM", "COLUMNS"] {
            if let value = Environment.value(key) { environment[key] = value }
        }
        let isTTY = TerminalDevice.isTerminal(fileDescriptor)
        let width = environment["COLUMNS"] == nil ? windowColumns(fileDescriptor: fileDescriptor) : nil
        return TerminalInfo(
            isTTY: isTTY,
            color: colorEnabled(isTTY: isTTY, environment: environment),
            columns: width ?? columns(environment: environment))
    }

    /// The terminal's width in columns (TIOCGWINSZ), or nil when it is not a terminal or does
    /// not say. Cheap enough to ask on every redraw, so a resized window is followed.
    public static func windowColumns(fileDescriptor: Int32 = 1) -> Int? { TerminalDevice.columns(fileDescriptor) }

    /// The terminal's columns and rows (TIOCGWINSZ), or nil when it is not a terminal or does
    /// not say. Asked on every redraw, so a resized window is followed (no SIGWINCH handler).
    /// Any thread but the realtime one.
    public static func windowSize(fileDescriptor: Int32 = 1) -> TerminalSize? { TerminalDevice.size(fileDescriptor) }

    /// The size the live screen is drawn at: the window's, so a resize is followed even where
    /// a shell exports a stale `COLUMNS`; where the terminal does not say, `COLUMNS` and `LINES`
    /// when they are positive numbers, else 80 columns and no limit on rows (nil). Pure; any
    /// thread.
    public static func screenSize(window: TerminalSize?, environment: [String: String]) -> (columns: Int, rows: Int?) {
        func positive(_ key: String) -> Int? {
            guard let text = environment[key], let n = Int(text), n > 0 else { return nil }
            return n
        }
        return (window?.columns ?? positive("COLUMNS") ?? 80, window?.rows ?? positive("LINES"))
    }
}
