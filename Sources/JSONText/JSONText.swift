// JSON string escaping: the one escaper behind every JSON text micmon writes (TerminalUI's
// objects through `JSON.quoted`, Engine's take sidecar). A module of its own because Engine
// cannot import TerminalUI. Pure; any thread.

/// RFC 8259 string literals.
public enum JSONText {
    /// A JSON string literal, quotes included: `"` and `\` escaped, control characters
    /// (U+0000…U+001F) as `\u00XX`, everything else (non-ASCII too) passed through as UTF-8.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u00" + (hex.count == 1 ? "0" : "") + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
