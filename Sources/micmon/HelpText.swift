// `--help` pages, generated from the option tables. Pure; any thread.

enum HelpText {
    static let width = 80
    /// Where an option's help starts: after "  -p, --port PORT   ".
    static let helpColumn = 22

    /// `micmon --help`.
    static var main: String {
        var lines = [CommandTable.title, "", "Usage:"]
        for spec in CommandTable.visibleCommands {
            lines += wrap(synopsisWords(spec), first: "  micmon \(spec.name.rawValue) ", width: width)
        }
        lines.append("  micmon --help | --version | COMMAND --help")
        lines += ["", "Commands:"]
        let nameWidth = (CommandTable.visibleCommands.map(\.name.rawValue.count).max() ?? 0) + 4
        for spec in CommandTable.visibleCommands {
            let label =
                "  " + spec.name.rawValue + String(repeating: " ", count: nameWidth - spec.name.rawValue.count - 2)
            lines += wrap(words(spec.summary), first: label, width: width)
        }
        lines += ["", "Options of every session command:"]
        for option in [CommandTable.name, CommandTable.server, CommandTable.help, CommandTable.versionOption] {
            lines += optionLines(option)
        }
        lines +=
            [""]
            + wrap(
                words("Run micmon COMMAND --help for a command's options, micmon manual for the manual page."),
                first: "", width: width)
        lines += [""] + exitCodeLines(CommandTable.sessionExitCodes)
        return lines.joined(separator: "\n")
    }

    /// `micmon COMMAND --help`.
    static func page(_ spec: CommandSpec) -> String {
        var lines = wrap(words(spec.summary), first: "micmon \(spec.name.rawValue) — ", width: width) + [""]
        lines += wrap(synopsisWords(spec), first: "Usage: micmon \(spec.name.rawValue) ", width: width)
        lines += [""] + fill(spec.about)
        if !spec.positionals.isEmpty {
            lines += ["", "Arguments:"]
            for positional in spec.positionals {
                lines += column("  " + positional.name, positional.help)
            }
        }
        lines += ["", "Options:"]
        for option in spec.options { lines += optionLines(option) }
        if let notes = spec.notes { lines += [""] + fill(notes) }
        lines += [""] + exitCodeLines(spec.exitCodes)
        return lines.joined(separator: "\n")
    }

    /// Help paragraphs filled to `width`, a blank line between paragraphs.
    static func fill(_ text: String) -> [String] {
        var lines: [String] = []
        var previous: TextBlock?
        for block in TextBlock.blocks(text) {
            switch block {
            case .paragraph(let text):
                if previous != nil { lines.append("") }
                lines += wrap(words(text), first: "", width: width)
            case .item(let text):
                if case .paragraph = previous { lines.append("") }
                lines += wrap(words(text), first: "- ", width: width)
            case .verbatim(let verbatim):
                lines += verbatim.map { "  " + $0 }
            }
            previous = block
        }
        return lines
    }

    /// "FILE [-p PORT]... [--json]", as words that may wrap between brackets.
    static func synopsisWords(_ spec: CommandSpec) -> [String] {
        spec.positionals.map(\.name)
            + spec.ownOptions.map { "[" + $0.synopsisName + "]" + ($0.isRepeatable ? "..." : "") }
    }

    /// "  -p, --port PORT   source port for ...", wrapped at `helpColumn`.
    static func optionLines(_ option: OptionSpec) -> [String] {
        let names = (option.shortName.map { $0 + ", " } ?? "    ") + option.longName
        return column("  " + names + (option.placeholder.map { " " + $0 } ?? ""), option.help)
    }

    static func exitCodeLines(_ codes: [ExitCodeSpec]) -> [String] {
        var lines = ["Exit codes:"]
        for code in codes {
            let label = "  " + String(code.code.rawValue)
            lines += wrap(
                words(code.meaning), first: label + String(repeating: " ", count: 6 - label.count), width: width)
        }
        return lines
    }

    /// `label` then `text` wrapped from `helpColumn` (on the next line when the label is too long).
    static func column(_ label: String, _ text: String) -> [String] {
        if label.count < helpColumn - 1 {
            return wrap(
                words(text), first: label + String(repeating: " ", count: helpColumn - label.count), width: width)
        }
        return [label] + wrap(words(text), first: String(repeating: " ", count: helpColumn), width: width)
    }

    static func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    /// `words` filled into lines of at most `width` columns, the first after `first`, the rest
    /// indented as deep as `first`.
    static func wrap(_ words: [String], first: String, width: Int) -> [String] {
        let indent = String(repeating: " ", count: first.count)
        var lines: [String] = []
        var line = first
        var lineHasWords = false
        for word in words {
            if lineHasWords && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent + word
            } else {
                line += (lineHasWords ? " " : "") + word
            }
            lineHasWords = true
        }
        while !lineHasWords && line.last == " " { line.removeLast() }
        lines.append(line)
        return lines
    }
}
