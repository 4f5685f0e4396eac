import Foundation

// The targets micmon-bench holds its figures to, read from the committed
// Benchmarks/thresholds.json, so a target is changed in one reviewed place and not in the
// code that measures. A missed target is reported, never a failed run. Main thread only.

/// One target: the figure it applies to (by key), how it compares, and the bound.
struct Threshold: Codable, Equatable {
    enum Comparison: String, Codable {
        case lessThan = "<"
        case atMost = "<="
        case atLeast = ">="
        case greaterThan = ">"
    }

    var key: String
    var figure: String
    var comparison: Comparison
    var value: Double
    var unit: String

    func isMet(by measured: Double) -> Bool {
        switch comparison {
        case .lessThan: measured < value
        case .atMost: measured <= value
        case .atLeast: measured >= value
        case .greaterThan: measured > value
        }
    }

    /// "≤ 1.15", "< 1 %": as the table shows it.
    var label: String {
        let symbol =
            switch comparison {
            case .lessThan: "<"
            case .atMost: "≤"
            case .atLeast: "≥"
            case .greaterThan: ">"
            }
        // Ratios with two decimals, as the table shows them ("≤ 0.60"); other bounds as written.
        let number =
            unit == "×"
            ? fixed(value, 2) : value == value.rounded() && abs(value) < 1e6 ? String(Int(value)) : String(value)
        return "\(symbol) \(number)\(unit.isEmpty || unit == "×" ? "" : " " + unit)"
    }
}

/// The thresholds file: a schema version and the targets.
struct ThresholdsFile: Codable {
    var schema: Int
    var about: String?
    var targets: [Threshold]

    static let schemaVersion = 1

    /// Reads and checks the file: known schema, no key twice.
    static func load(path: String) throws -> ThresholdsFile {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let file = try JSONDecoder().decode(ThresholdsFile.self, from: data)
        guard file.schema == schemaVersion else {
            throw ThresholdsError(text: "\(path): schema \(file.schema), this bench reads \(schemaVersion)")
        }
        let keys = file.targets.map(\.key)
        if let repeated = keys.first(where: { key in keys.filter { $0 == key }.count > 1 }) {
            throw ThresholdsError(text: "\(path): target \(repeated) is given twice")
        }
        return file
    }

    /// Benchmarks/thresholds.json from the working directory (the package root, as
    /// `swift run` runs it), else from the package root above this executable's .build folder.
    static func defaultPath() -> String {
        let relative = "Benchmarks/thresholds.json"
        if FileManager.default.fileExists(atPath: relative) { return relative }
        let executable = Options.siblingExecutable("micmon-bench")
        var parts = executable.split(separator: "/", omittingEmptySubsequences: false)
        if let build = parts.lastIndex(of: ".build") {
            parts.removeSubrange(build...)
            return parts.joined(separator: "/") + "/" + relative
        }
        return relative
    }
}

struct ThresholdsError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

/// How a target came out in this run.
struct TargetOutcome: Codable {
    enum State: String, Codable {
        case met
        case missed
        /// Its section did not run, or the figure could not be measured.
        case notMeasured = "not measured"
    }

    var key: String
    var figure: String
    var target: String
    var measured: Double?
    var state: State
}
