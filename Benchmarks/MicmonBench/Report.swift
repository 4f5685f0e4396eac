import Foundation
import Platform

/// Median, min and max of repeated measurements.
struct Spread: Codable {
    var median: Double
    var min: Double
    var max: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first!
        max = sorted.last!
    }
}

/// One line of the table (and of the JSON): a measured figure with its spread, or a ratio of
/// medians, or a text verdict; with the target it is held to, if any (from thresholds.json, by
/// `key`).
struct Figure: Codable {
    var section: String
    var name: String
    var key: String?
    var unit: String
    var median: Double?
    var min: Double?
    var max: Double?
    var text: String?
    var target: String?
    var met: Bool?
    var digits: Int

    static func measured(
        _ section: String, _ name: String, _ values: [Double], unit: String, digits: Int,
        threshold: Threshold? = nil
    ) -> Figure {
        let spread = Spread(values)
        return Figure(
            section: section, name: name, key: threshold?.key, unit: unit, median: spread?.median,
            min: spread?.min, max: spread?.max, text: spread == nil ? "n/a" : nil, target: threshold?.label,
            met: spread.flatMap { s in threshold.map { $0.isMet(by: s.median) } }, digits: digits)
    }

    static func ratio(_ section: String, _ name: String, _ value: Double?, threshold: Threshold? = nil) -> Figure {
        Figure(
            section: section, name: name, key: threshold?.key, unit: "×", median: value,
            text: value == nil ? "n/a" : nil,
            target: threshold?.label, met: value.flatMap { v in threshold.map { $0.isMet(by: v) } }, digits: 2)
    }

    static func verdict(_ section: String, _ name: String, _ text: String, met: Bool? = nil) -> Figure {
        Figure(section: section, name: name, unit: "", text: text, met: met, digits: 0)
    }
}

/// Everything one bench run measured, for the table and the JSON file.
struct Report: Codable {
    /// The JSON's layout version; raise it when a key changes meaning or goes away.
    var schema = 1
    var date: String
    var machine: String
    var processors: Int
    var loadAverageAtStart: String
    var loadAverageAtEnd: String = ""
    var server: String = ""
    var periodFrames: Int
    var sampleRate: Int
    var seconds: Double
    var rounds: Int
    var commandLine: String
    var micmon: String
    var warnings: [String] = []
    /// The thresholds file read, and its targets (the figures refer to them by key).
    var thresholdsPath: String = ""
    var thresholds: [Threshold] = []
    /// Each target's outcome in this run (`evaluateTargets`).
    var targets: [TargetOutcome] = []
    var figures: [Figure] = []
    var failures: [String] = []
    /// Failures of takes in rounds taken again for host steal: listed, not counted.
    var disturbedFailures: [String] = []
    var ring: RingBench.Result?
    var meters: [MeterBench.Result] = []
    var denoise: [DenoiseBench.Result] = []
    var loudness: LoudnessBench.Result?
    var reportFloor: ReportFloorBench.Result?
    var runs: [ProcessBench.Run] = []
    /// The scaling section's configurations, the servers it ran on, and its plot's points.
    var scalingPlan: [ScalingConfiguration] = []
    var scalingServers: [String] = []
    var scaling: [ScalingPoint] = []

    /// The fixed-width table. Ratios are of the medians shown above them.
    func table() -> String {
        let columns = [50, 10, 10, 10, 11, 8, 2]
        func line(_ cells: [String]) -> String {
            var text = cells[0].padding(toLength: columns[0], withPad: " ", startingAt: 0)
            for (cell, width) in zip(cells.dropFirst(), columns.dropFirst()) {
                text += " " + String(repeating: " ", count: max(0, width - cell.count)) + cell
            }
            return text
        }
        let width = columns.reduce(columns.count - 1, +)
        var lines = [
            "micmon-bench  \(date)  \(machine), nproc \(processors)  load \(loadAverageAtStart) → \(loadAverageAtEnd)",
            "server: \(server.isEmpty ? "(not started)" : server)  (period \(periodFrames) frames = \(fixed(periodMicroseconds, 1)) µs)",
            "S = \(format(seconds)) s per take, R = \(rounds) round\(rounds == 1 ? "" : "s"); micmon: \(micmon)",
        ]
        lines += warnings.map { "warning: \($0)" }
        lines.append(String(repeating: "═", count: width))
        lines.append(line(["figure", "median", "min", "max", "unit", "target", "ok"]))
        var section = ""
        for figure in figures {
            if figure.section != section {
                section = figure.section
                lines.append("── \(section) " + String(repeating: "─", count: max(0, width - section.count - 4)))
            }
            let value = figure.text ?? figure.median.map { fixed($0, figure.digits) } ?? ""
            lines.append(
                line([
                    figure.name, value,
                    figure.min.map { fixed($0, figure.digits) } ?? "",
                    figure.max.map { fixed($0, figure.digits) } ?? "",
                    figure.unit, figure.target ?? "", figure.met.map { $0 ? "✓" : "✗" } ?? "",
                ]))
        }
        lines.append(String(repeating: "═", count: width))
        lines += targetLines()
        lines.append(failures.isEmpty ? "all runs succeeded" : "FAILED RUNS:")
        lines += failures.map { "  - \($0)" }
        if !disturbedFailures.isEmpty {
            lines.append("failed takes in rounds taken again for host steal (not counted):")
            lines += disturbedFailures.map { "  - \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    var periodMicroseconds: Double { Double(periodFrames) / Double(sampleRate) * 1e6 }

    /// The target with this key in the thresholds file, if it has one.
    func threshold(_ key: String) -> Threshold? { thresholds.first { $0.key == key } }

    /// Sets `targets`: each threshold against the figure carrying its key in this run.
    mutating func evaluateTargets() {
        targets = thresholds.map { threshold in
            let figure = figures.first { $0.key == threshold.key }
            let measured = figure?.median
            let state: TargetOutcome.State = measured.map { threshold.isMet(by: $0) ? .met : .missed } ?? .notMeasured
            return TargetOutcome(
                key: threshold.key, figure: threshold.figure, target: threshold.label, measured: measured,
                state: state)
        }
    }

    /// Which targets were met and which missed (a missed target does not fail the run).
    func targetLines() -> [String] {
        guard !thresholds.isEmpty else {
            return ["targets: none read (\(thresholdsPath.isEmpty ? "no thresholds file" : thresholdsPath))"]
        }
        let met = targets.filter { $0.state == .met }.count
        let missed = targets.filter { $0.state == .missed }.count
        let absent = targets.count - met - missed
        var lines = ["targets (\(thresholdsPath)): \(met) met, \(missed) missed, \(absent) not measured in this run"]
        for outcome in targets {
            let mark =
                switch outcome.state {
                case .met: "✓ met   "
                case .missed: "✗ MISSED"
                case .notMeasured: "- n/a   "
                }
            let value = outcome.measured.map { fixed($0, 3) } ?? "-"
            lines.append("  \(mark) \(outcome.figure): \(value), target \(outcome.target)")
        }
        return lines
    }

    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}

func fixed(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}
