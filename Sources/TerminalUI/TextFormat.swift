// Locale-free number and string formatting shared by the renderers. Pure; any thread.
import DSP

public enum TextFormat {
    /// `value` with exactly `decimals` (0…9) digits after the point, rounded half away from
    /// zero, never "-0.0"; NaN prints as 0 and |value|·10^decimals is clamped to 1e18.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        precondition((0 ... 9).contains(decimals))
        var scale: UInt64 = 1
        for _ in 0 ..< decimals { scale *= 10 }
        let magnitude = value.isNaN ? 0 : value.magnitude
        let scaled = UInt64(min(magnitude * Double(scale), 1e18) + 0.5)
        let whole = String(scaled / scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + whole }
        let fraction = String(scaled % scale)
        return sign + whole + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// A dB value made finite for display: below the floor (or NaN) reads the floor.
    static func decibels(_ value: Double, decimals: Int) -> String {
        let clamped = value.isNaN || value < Decibels.floor ? Decibels.floor : min(value, 999)
        return fixed(clamped, decimals: decimals)
    }

    /// mm:ss.s, truncated to tenths (a clock never runs ahead); minutes grow past 99.
    static func clock(_ seconds: Double) -> String {
        let tenths = seconds.isFinite && seconds > 0 ? Int(min(seconds, 1e12) * 10) : 0
        let minutes = tenths / 600
        let rest = tenths % 600
        return pad(String(minutes), 2, with: "0") + ":" + pad(String(rest / 10), 2, with: "0") + "." + String(rest % 10)
    }

    /// Right-aligns `text` in `width` columns.
    static func pad(_ text: String, _ width: Int, with fill: Character = " ") -> String {
        text.count >= width ? text : String(repeating: fill, count: width - text.count) + text
    }

    /// Left-aligns `text` in `width` columns, cutting it with "…" if longer.
    static func padRight(_ text: String, _ width: Int) -> String {
        if text.count > width { return width > 0 ? String(text.prefix(width - 1)) + "…" : "" }
        return text + String(repeating: " ", count: width - text.count)
    }

    /// `text` safe to print on a terminal: control characters (C0, DEL, C1) become "?", so a
    /// file or port name with ESC or a newline in it can neither drive the terminal nor start a
    /// line of its own. Every human-readable line goes through it: the renderers for the names
    /// they show, and the executable's stderr writer for each whole line.
    public static func printable(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            let v = scalar.value
            out.unicodeScalars.append(v < 0x20 || (0x7F ... 0x9F).contains(v) ? "?" : scalar)
        }
        return out
    }
}
