// `micmon manual`: the man page (roff, man macros), generated from the option tables. Pure;
// any thread.

enum ManualPage {
    static var page: String {
        var out: [String] = [
            #".TH MICMON 1 "" "\#(escape(CommandTable.version))" "User Commands""#,
            ".SH NAME",
            #"micmon \- "#
                + escape(
                    String(CommandTable.title.split(separator: "—", maxSplits: 1).last ?? "")
                        .trimmingSpaces()),
            ".SH SYNOPSIS",
        ]
        for spec in CommandTable.visibleCommands {
            out += [
                ".B micmon \(spec.name.rawValue)", escape(HelpText.synopsisWords(spec).joined(separator: " ")), ".br",
            ]
        }
        out += [
            ".SH DESCRIPTION",
            escape(
                "micmon meters, records, monitors and plays audio through a JACK server, measures its latency, "
                    + "and runs a dual-microphone noise suppressor live or offline. Each command below takes its "
                    + "options after the command name; every option that takes a value accepts --opt value and "
                    + "--opt=value."),
            ".SH COMMANDS",
        ]
        for spec in CommandTable.visibleCommands {
            out.append(#".SS "micmon \#(spec.name.rawValue)""#)
            out.append(escape(spec.summary.prefix(1).uppercased() + spec.summary.dropFirst() + "."))
            out += paragraphs(spec.about)
            for positional in spec.positionals {
                out += [".TP", ".I \(escape(positional.name))", escape(positional.help)]
            }
            for option in spec.options {
                var names = option.shortName.map { "\\fB\(escape($0))\\fR, " } ?? ""
                names += "\\fB\(escape(option.longName))\\fR"
                if let placeholder = option.placeholder { names += " \\fI\(escape(placeholder))\\fR" }
                out += [".TP", names, escape(option.help)]
            }
            if let notes = spec.notes { out += paragraphs(notes) }
            out.append(".PP")
            out.append("Exit status:")
            for code in spec.exitCodes {
                out += [".TP", ".B \(code.code.rawValue)", escape(code.meaning)]
            }
        }
        out += [".SH EXIT STATUS"]
        for code in CommandTable.sessionExitCodes {
            out += [".TP", ".B \(code.code.rawValue)", escape(code.meaning)]
        }
        out += [
            ".SH ENVIRONMENT",
            ".TP", ".B JACK_DEFAULT_SERVER", escape("the server to use when -s is not given (else \"default\")"),
            ".TP", ".B NO_COLOR", escape("when set and not empty, no colour even on a terminal"),
            ".TP", ".B COLUMNS", escape("the width to draw meters in, when stdout is not a terminal that says"),
            ".SH SEE ALSO",
            #".BR jackd (1),"#,
            #".BR jack_lsp (1)"#,
        ]
        return out.joined(separator: "\n") + "\n"
    }

    /// Text as roff: backslashes and hyphens escaped, no line starting with a control
    /// character, and every non-ASCII character as a `\[uXXXX]` glyph.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\n": out += " "
            default:
                if scalar.value < 0x80 {
                    out.unicodeScalars.append(scalar)
                } else {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
                }
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    /// Help paragraphs as roff: filled paragraphs, list items, examples kept as they are.
    static func paragraphs(_ text: String) -> [String] {
        var out: [String] = []
        for block in TextBlock.blocks(text) {
            switch block {
            case .paragraph(let text): out += [".PP", escape(text)]
            case .item(let text): out += [#".IP \(bu 2"#, escape(text)]
            case .verbatim(let lines): out += [".RS", ".nf"] + lines.map(escape) + [".fi", ".RE"]
            }
        }
        return out
    }
}
