// The one option scanner: splits a command's arguments into options (with their values) and
// positionals, by the command's option table. Pure; any thread.

/// A command's arguments, scanned: options in the order given, and the positionals.
struct ScannedArguments: Equatable {
    struct Occurrence: Equatable {
        let option: OptionSpec
        /// As typed ("-p", "--port"), for messages.
        let spelling: String
        let value: String?
    }

    var occurrences: [Occurrence] = []
    var positionals: [String] = []

    func isSet(_ long: String) -> Bool { occurrences.contains { $0.option.long == long } }

    /// Every value given for `long`, in order.
    func values(_ long: String) -> [String] { occurrences.filter { $0.option.long == long }.compactMap(\.value) }

    /// The last value given for `long` (a later one overrides an earlier one).
    func last(_ long: String) -> String? { values(long).last }

    /// Each value of the numeric option `long` checked against the range its table gives (so
    /// every one is checked); the last one, or nil. The range comes from the option itself, so
    /// a numeric option cannot be read unchecked.
    func number(_ long: String) throws(UsageError) -> Double? {
        var result: Double?
        for occurrence in occurrences where occurrence.option.long == long {
            guard let range = occurrence.option.range, let value = occurrence.value else { continue }
            result = try range.value(value, option: "--" + long)
        }
        return result
    }

    /// Each value of `long` converted (so every one is checked); the last one, or nil.
    func last<T>(_ long: String, _ convert: (String) throws(UsageError) -> T) throws(UsageError) -> T? {
        var result: T?
        for value in values(long) { result = try convert(value) }
        return result
    }
}

enum ScanOutcome: Equatable {
    case arguments(ScannedArguments)
    case help
    case version
}

enum OptionScanner {
    /// Scans `arguments` (those after the command name) by `spec`'s table.
    ///
    /// `--opt value` and `--opt=value` for every option that takes a value, `-x value` for those
    /// with a short name; a switch given `=value` is an error. `--` ends the options. An argument
    /// that is `-` or a number ("-1") is a positional. `--help`/`-h` and `--version` end the scan
    /// where they stand, so what follows them is not checked.
    static func scan(_ arguments: [String], by spec: CommandSpec) throws(UsageError) -> ScanOutcome {
        var scanned = ScannedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" || Double(argument) != nil {
                scanned.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var spelling = argument
            var inline: String?
            let option: OptionSpec?
            if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    spelling = String(argument[..<equals])
                    inline = String(argument[argument.index(after: equals)...])
                }
                option = spec.option(long: String(spelling.dropFirst(2)))
            } else if argument.count == 2, let letter = argument.last {
                option = spec.option(short: letter)
            } else {
                option = nil
            }
            guard let option else {
                if let reason = spec.refusal(of: spelling) { throw UsageError(reason) }
                let command = spec.name.rawValue
                throw UsageError("unknown option '\(spelling)' for micmon \(command) (see micmon \(command) --help)")
            }
            switch option.long {
            case "help": return .help
            case "version": return .version
            default: break
            }
            var value: String?
            if option.takesValue {
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count else { throw UsageError("option \(spelling) needs a value") }
                    value = arguments[index]
                    index += 1
                }
            } else if inline != nil {
                throw UsageError("option \(spelling) takes no value")
            }
            scanned.occurrences.append(.init(option: option, spelling: spelling, value: value))
        }
        return .arguments(scanned)
    }
}
