// stdout and stderr as file descriptors: unbuffered writes, whether each is a terminal, and the
// terminal's width. The main thread prints; nothing here is for the realtime thread.

import Glibc

public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2

    /// Writes all of `text` with write(2), unbuffered (a killed process has printed all it said).
    /// Returns false when the stream refused (a closed pipe, a full device).
    @discardableResult
    public func write(_ text: String) -> Bool {
        var text = text
        let descriptor = rawValue
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    /// Whether the stream is a terminal (`isatty`).
    public var isTerminal: Bool { TerminalDevice.isTerminal(rawValue) }

    /// The terminal's width in columns (TIOCGWINSZ), or nil when it is not a terminal or does
    /// not say. Cheap enough to ask on every redraw, so a resized window is followed.
    public var terminalColumns: Int? { TerminalDevice.columns(rawValue) }
}

/// Any descriptor as a possible terminal.
public enum TerminalDevice {
    /// Whether `descriptor` is a terminal (`isatty`); false for one that is not open.
    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// The terminal's width in columns, or nil when `descriptor` is not a terminal or does not say.
    public static func columns(_ descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The terminal's columns and rows, or nil when `descriptor` is not a terminal or does not
    /// say. One ioctl: cheap enough for every redraw, which is how a resized window (SIGWINCH)
    /// is followed with no signal handler at all.
    public static func size(_ descriptor: Int32) -> TerminalSize? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row))
    }
}

/// A terminal's size in character cells.
public struct TerminalSize: Sendable, Equatable {
    public var columns: Int
    public var rows: Int

    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }
}
