// The command line as data: every command's options, positionals, help texts and exit codes.
// The scanner, `--help`, `micmon completions` and `micmon manual` all read these tables, so they
// cannot disagree. Pure values; any thread.

/// A usage error: one line for stderr, exit 64.
struct UsageError: Error, CustomStringConvertible, Equatable {
    let description: String
    init(_ message: String) { description = message }
}

/// What an option's value (or a positional argument) is: how help names it and how a shell
/// completes it.
enum ValueKind: Equatable, Sendable {
    /// No value: the option is a switch.
    case flag
    /// Free text (a client or server name).
    case text
    /// A number, and the range it must fall in (shown in help, checked by the parser).
    case number(NumberRange)
    /// One of a fixed set of words.
    case choice([String])
    /// A file path.
    case file
    /// A JACK output port: something that sends audio (`system:capture_1`), the source of an input.
    case outputPort
    /// A JACK input port: something that receives audio (`system:playback_1`).
    case inputPort
}

/// The values a numeric option takes: `lower` … `upper` inclusive, whole numbers only or any.
/// Every numeric option has one, so no value the parser accepts can overflow what the command
/// computes from it (`--duration 1e300` frames, `--loops` passes); help prints it.
struct NumberRange: Sendable, Equatable {
    let lower: Double
    let upper: Double
    let isWhole: Bool
    /// After the numbers in help ("s", "dB", "frames"), or "".
    let unit: String

    init(_ lower: Double, _ upper: Double, whole: Bool = false, unit: String = "") {
        self.lower = lower
        self.upper = upper
        self.isWhole = whole
        self.unit = unit
    }

    /// "-60 … 24 dB".
    var text: String { Self.plain(lower) + " … " + Self.plain(upper) + (unit.isEmpty ? "" : " " + unit) }

    /// `text` as a number in the range, or the usage error naming `option`.
    func value(_ text: String, option: String) throws(UsageError) -> Double {
        // Decimal notation only: Double(String) would also take "0x1p4", "inf" and "nan".
        let isDecimal = !text.isEmpty && text.allSatisfy { "0123456789+-.eE".contains($0) }
        if isWhole {
            guard isDecimal, let whole = Int(text), contains(Double(whole)) else {
                throw UsageError(
                    "\(option) needs a whole number from \(Self.plain(lower)) to \(Self.plain(upper)), not '\(text)'")
            }
            return Double(whole)
        }
        guard isDecimal, let number = Double(text), number.isFinite else {
            throw UsageError("\(option) needs a number, not '\(text)'")
        }
        guard contains(number) else {
            throw UsageError(
                "\(option) must be between \(Self.plain(lower)) and \(Self.plain(upper))"
                    + (unit.isEmpty ? "" : " " + unit) + " (got \(text))")
        }
        return number
    }

    func contains(_ value: Double) -> Bool { value >= lower && value <= upper }

    /// 1 as "1", 0.5 as "0.5", 2678400 as "2678400".
    static func plain(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int(value)) : String(value)
    }
}

/// One option: `--long` and maybe `-s`, its value, its help line.
///
/// Help texts are made only when shown (some state figures computed from the DSP code), so
/// parsing a command line costs nothing for them; two options are equal when they parse alike.
struct OptionSpec: Sendable, Equatable {
    /// Without the dashes: "port".
    let long: String
    let short: Character?
    /// The value's name in help ("PORT"); nil for a switch.
    let placeholder: String?
    let kind: ValueKind
    /// May be given more than once, each time adding a value.
    let isRepeatable: Bool
    private let makeHelp: @Sendable () -> String

    init(
        _ long: String, short: Character? = nil, _ placeholder: String? = nil, kind: ValueKind = .flag,
        repeatable: Bool = false, help: @autoclosure @escaping @Sendable () -> String
    ) {
        self.long = long
        self.short = short
        self.placeholder = placeholder
        self.kind = kind
        self.makeHelp = help
        self.isRepeatable = repeatable
    }

    /// One sentence or more; wrapped to the terminal or the man page. A numeric option's range
    /// ends it ("Range: -60 … 24 dB."), from the table, so help and parser cannot disagree.
    var help: String {
        guard let range else { return makeHelp() }
        let text = makeHelp()
        return text + (text.hasSuffix(".") ? " " : ". ") + "Range: " + range.text
            + (range.isWhole ? ", whole numbers." : ".")
    }

    /// The range of a numeric option's value.
    var range: NumberRange? {
        if case .number(let range) = kind { return range }
        return nil
    }

    static func == (a: OptionSpec, b: OptionSpec) -> Bool {
        a.long == b.long && a.short == b.short && a.placeholder == b.placeholder && a.kind == b.kind
            && a.isRepeatable == b.isRepeatable
    }

    var takesValue: Bool { kind != .flag }
    var longName: String { "--" + long }
    var shortName: String? { short.map { "-" + String($0) } }
    /// "-p PORT", "--json": how a synopsis names it.
    var synopsisName: String { (shortName ?? longName) + (placeholder.map { " " + $0 } ?? "") }
}

/// A positional argument.
struct PositionalSpec: Sendable, Equatable {
    let name: String
    let kind: ValueKind
    let help: String
}

/// An exit code and what it means for one command.
struct ExitCodeSpec: Sendable, Equatable {
    let code: ExitCode
    let meaning: String
}

/// One command: what it is called, what it takes, what it says about itself.
struct CommandSpec: Sendable {
    let name: CommandName
    /// One line for the command list and the man page's NAME.
    let summary: String
    let positionals: [PositionalSpec]
    private let makeAbout: @Sendable () -> String
    let options: [OptionSpec]
    /// Options other commands have that this one refuses with a reason of its own (not shown).
    let refusals: [(options: [String], reason: String)]
    /// Paragraphs after the options.
    let notes: String?
    let exitCodes: [ExitCodeSpec]
    /// Left out of the command list, the manual and completion (a helper for the scripts).
    let isHidden: Bool

    init(
        name: CommandName, summary: String, positionals: [PositionalSpec],
        about: @autoclosure @escaping @Sendable () -> String, options: [OptionSpec],
        refusals: [(options: [String], reason: String)], notes: String?, exitCodes: [ExitCodeSpec],
        isHidden: Bool = false
    ) {
        self.name = name
        self.summary = summary
        self.positionals = positionals
        self.makeAbout = about
        self.options = options
        self.refusals = refusals
        self.notes = notes
        self.exitCodes = exitCodes
        self.isHidden = isHidden
    }

    /// Paragraphs after the usage line (see `TextBlock` for how lines are read); made when shown.
    var about: String { makeAbout() }

    func option(long: String) -> OptionSpec? { options.first { $0.long == long } }
    func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }

    /// The refusal reason for an option this command does not take, if it has one.
    func refusal(of name: String) -> String? { refusals.first { $0.options.contains(name) }?.reason }

    /// Options other than --help and --version.
    var ownOptions: [OptionSpec] { options.filter { $0.long != "help" && $0.long != "version" } }
}

/// A help paragraph as the help page and the man page lay it out. In the tables' text, a blank
/// line separates paragraphs; a line starting with "- " starts a list item, and indented lines
/// after it continue it; other indented lines are kept as they are (examples); all other lines
/// are filled.
enum TextBlock: Equatable {
    case paragraph(String)
    case item(String)
    case verbatim([String])

    static func blocks(_ text: String) -> [TextBlock] {
        var blocks: [TextBlock] = []
        var inParagraph = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let content = line.trimmingSpaces()
            let last = blocks.count - 1
            if content.isEmpty {
                inParagraph = false
            } else if line.hasPrefix("- ") {
                blocks.append(.item(String(line.dropFirst(2)).trimmingSpaces()))
                inParagraph = true
            } else if line.hasPrefix("  "), inParagraph, case .item(let text) = blocks[last] {
                blocks[last] = .item(text + " " + content)
            } else if line.hasPrefix("  ") {
                if last >= 0, case .verbatim(let lines) = blocks[last] {
                    blocks[last] = .verbatim(lines + [String(line.dropFirst(2))])
                } else {
                    blocks.append(.verbatim([String(line.dropFirst(2))]))
                }
                inParagraph = false
            } else if inParagraph, last >= 0, case .paragraph(let text) = blocks[last] {
                blocks[last] = .paragraph(text + " " + content)
            } else {
                blocks.append(.paragraph(content))
                inParagraph = true
            }
        }
        return blocks
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces.
    func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
