import DSP
import Engine
import Foundation
import Platform

// micmon-bench: one table of figures measured in this run (ring, meters, micmon against
// jack_capture and a bare JACK client, channel scaling), also written as JSON.
// Callbacks handed to C live in other files (a closure here would be @MainActor).

if CommandLine.arguments.dropFirst().first == FeatureDump.flag {
    exit(FeatureDump.run(arguments: Array(CommandLine.arguments.dropFirst(2))))
}

Cleanup.installSignalHandlers()

let options: Options
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed):
    options = parsed
case .failure(let error):
    if error.isHelp {
        print(Options.usage)
        exit(0)
    }
    FileHandle.standardError.write(Data("micmon-bench: \(error.text)\n\(Options.usage)\n".utf8))
    exit(64)
}

let sampleRate = 48000
let periodFrames = 32
var report = Report(
    date: ISO8601DateFormatter().string(from: Date()), machine: machineDescription(),
    processors: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), loadAverageAtStart: loadAverage(),
    periodFrames: periodFrames, sampleRate: sampleRate, seconds: options.seconds, rounds: options.rounds,
    commandLine: CommandLine.arguments.joined(separator: " "), micmon: options.micmonPath)
#if DEBUG
    report.warnings.append("a debug build: its timings are not micmon's; run swift run -c release micmon-bench")
#endif
report.thresholdsPath = options.thresholdsPath
do {
    report.thresholds = try ThresholdsFile.load(path: options.thresholdsPath).targets
} catch {
    report.warnings.append("no targets: the thresholds file \(options.thresholdsPath) could not be read: \(error)")
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("micmon-bench: \(text)\n".utf8))
}

if options.sections.contains("ring") {
    progress("ring: \(options.ringBlocks) blocks × 7 runs each")
    let result = RingBench.run(blocks: options.ringBlocks, repeats: 7)
    report.ring = result
    report.addRing(result, blocks: options.ringBlocks)
}

if options.sections.contains("meters") {
    progress("meters")
    let results = [32, 64].map { MeterBench.run(periodFrames: $0, framesPerRepeat: 9_600_000, repeats: 9) }
    report.meters = results
    report.addMeters(results)
}

if options.sections.contains("denoise") {
    progress("denoise")
    let results = NoiseSuppressorLatency.allCases.map {
        DenoiseBench.run(periodFrames: 64, framesPerRepeat: 2_400_000, repeats: 9, latency: $0)
    }
    report.denoise = results
    report.addDenoise(results)
}

if options.sections.contains("loudness") {
    progress("loudness")
    let result = LoudnessBench.run(periodFrames: 256, seconds: 20, repeats: 5)
    report.loudness = result
    report.addLoudness(result)
}

if options.sections.contains("report-floor"), let path = options.reportFile {
    progress("report-floor: \(path) × \(options.reportRepeats)")
    let result = ReportFloorBench.run(path: path, repeats: options.reportRepeats)
    report.reportFloor = result
    report.addReportFloor(result)
}

let scalingSeconds = max(1, (options.seconds / 3).rounded())
if !options.sections.isDisjoint(with: ["record", "rotation"]) {
    runProcessSections()
}
if options.sections.contains("scaling") {
    runScalingSection()
}
if options.sections.contains("soak") {
    runSoakSection()
}

/// The soak (`--only soak`): one S-second take of 64 channels of the source at 48 kHz / 32
/// frames (or `--soak-channels`, `--soak-rate`) by micmon (its default analysis, or none with
/// `--soak-loudness-mode off`), while `stress-ng --hdd 1` (at nice 19, in a folder of its own)
/// loads the disk (none with `--soak-stress none`); checked bit for bit on every channel
/// (`ScalingBench.soak`).
@MainActor func runSoakSection() {
    withBenchDirectory { directory in
        ScalingBench.soak(
            channels: options.soakChannels, sampleRate: options.soakSampleRate, seconds: options.seconds,
            loudnessOff: options.soakLoudnessOff, diskStress: options.soakDiskStress,
            micmonPath: options.micmonPath, directory: directory, report: &report, progress: progress)
    }
}

/// The scaling section on servers of its own (`ScalingBench`).
@MainActor func runScalingSection() {
    withBenchDirectory { directory in
        ScalingBench.run(
            plan: ScalingConfiguration.plan, seconds: scalingSeconds, rounds: options.rounds,
            micmonPath: options.micmonPath, directory: directory, report: &report, progress: progress)
    }
}

/// Runs `body` with a temporary folder of this run's, after checking the micmon binary the
/// section spawns (a failure in the report when it is missing); removes the folder after.
@MainActor func withBenchDirectory(_ body: (String) -> Void) {
    if let warning = staleBinaryWarning(options.micmonPath) { report.warnings.append(warning) }
    guard access(options.micmonPath, X_OK) == 0 else {
        report.failures.append(
            "no micmon at \(options.micmonPath): build it with `swift build -c release --product micmon`")
        return
    }
    removeAbandonedDirectories()
    let directory = NSTemporaryDirectory() + "micmon-bench-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    body(directory)
}

/// Starts the private server and the source, runs the takes, and stops everything again.
@MainActor func runProcessSections() {
    if let warning = staleBinaryWarning(options.micmonPath) { report.warnings.append(warning) }
    guard access(options.micmonPath, X_OK) == 0 else {
        report.failures.append(
            "no micmon at \(options.micmonPath): build it with `swift build -c release --product micmon`")
        return
    }
    removeAbandonedDirectories()
    unlink(options.jsonPath + ".jackd.log")  // a failed earlier run's
    let directory = NSTemporaryDirectory() + "micmon-bench-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }

    let server: BenchServer
    do {
        server = try BenchServer(
            name: "micmon-bench-\(getpid())", sampleRate: sampleRate, periodFrames: periodFrames,
            captureChannels: 2, playbackChannels: 2,
            logPath: directory + "/jackd.log")
    } catch {
        report.failures.append(error.description)
        return
    }
    defer {
        server.stop()
        if !report.failures.isEmpty {
            let kept = options.jsonPath + ".jackd.log"
            server.keepLog(at: kept)
            report.warnings.append("a run failed; the JACK server's log is in \(kept)")
        }
    }
    report.server = server.commandLine

    let source: SignalSource
    do {
        source = try SignalSource(serverName: server.name, clientName: "micmon-bench-src")
    } catch {
        report.failures.append("the signal source did not start: \(error)")
        return
    }
    defer { withExtendedLifetime(source) {} }
    let bench = ProcessBench(
        server: server, sourcePorts: source.portNames, micmonPath: options.micmonPath, directory: directory)

    func take(
        _ program: ProcessBench.Program, _ purpose: ProcessBench.Purpose, round: Int, seconds: Double,
        ports: [String]? = nil, rotating: Bool = false
    ) {
        if server.unexpectedEnd != nil { return }  // reported once, below
        let run = bench.run(program, purpose, round: round, seconds: seconds, ports: ports, rotating: rotating)
        report.runs.append(run)
        let usage =
            (run.usage.map {
                String(
                    format: "%.3f s CPU, %.3f vcsw/period", $0.cpuSeconds,
                    Double($0.voluntarySwitches) / (seconds * bench.periodsPerSecond))
            } ?? "no usage")
            + (run.stealPercent.map { String(format: ", host steal %.1f %%", $0) } ?? "")
        progress(
            "  \(purpose.rawValue) \(round): \(program.rawValue) \(run.channels) ch: \(usage)\(run.failure.map { " — FAILED: \($0)" } ?? "")"
        )
        if let failure = run.failure {
            report.failures.append("\(purpose.rawValue) \(round), \(run.channels) ch: \(failure)")
        }
        if let end = server.unexpectedEnd {
            report.failures.append(end + "; the remaining takes were skipped")
            progress(end)
        }
    }

    if options.sections.contains("record") {
        progress("warm-up: each program for 2 s (not counted)")
        for program in ProcessBench.Program.recordSection { take(program, .warmUp, round: 0, seconds: 2) }
        var retakesLeft = options.rounds
        for round in 1 ... options.rounds {
            // A B C, then C B A: a drift of the machine's load across a round weighs on every
            // program alike, instead of always on the one that runs last. The count is even, so
            // micmon and the bare client each run first in half the rounds (README: the bias).
            let order =
                round % 2 == 1 ? ProcessBench.Program.recordSection : ProcessBench.Program.recordSection.reversed()
            while true {
                progress(
                    "round \(round)/\(options.rounds): \(round % 2 == 1 ? "A B C" : "C B A"), \(format(options.seconds)) s each"
                )
                let first = report.runs.count
                let firstFailure = report.failures.count
                for program in order { take(program, .comparison, round: round, seconds: options.seconds) }
                let steal = report.runs[first...].compactMap(\.stealPercent).max() ?? 0
                guard steal > options.maxStealPercent, retakesLeft > 0, server.unexpectedEnd == nil else { break }
                retakesLeft -= 1
                for index in first ..< report.runs.count { report.runs[index].purpose = .disturbed }
                report.disturbedFailures += report.failures[firstFailure...]
                report.failures.removeSubrange(firstFailure...)
                progress(
                    "round \(round): the host stole \(fixed(steal, 1)) % of the processors during a take "
                        + "(over \(fixed(options.maxStealPercent, 1)) %); taking it again (\(retakesLeft) retakes left)"
                )
            }
        }
        report.addProcessRuns(
            seconds: options.seconds, rounds: options.rounds, periodsPerSecond: bench.periodsPerSecond,
            maxStealPercent: options.maxStealPercent)
    }
    if options.sections.contains("rotation") {
        // record plain (A) and with --pre-roll 10 --split 10s (R), A R then R A.
        for round in 1 ... options.rounds {
            progress(
                "rotation round \(round)/\(options.rounds): \(round % 2 == 1 ? "A R" : "R A"), \(format(options.seconds)) s each"
            )
            for rotating in round % 2 == 1 ? [false, true] : [true, false] {
                take(.micmon, .rotation, round: round, seconds: options.seconds, rotating: rotating)
            }
        }
        report.addRotation(seconds: options.seconds, rounds: options.rounds)
    }
}

report.loadAverageAtEnd = loadAverage()
report.evaluateTargets()
print(report.table())
do {
    try report.writeJSON(to: options.jsonPath)
    print("JSON: \(options.jsonPath)")
    if !report.scaling.isEmpty {
        // The plot is made from the JSON just written, as docs/benchmarks.md's is.
        let svgPath =
            (options.jsonPath.hasSuffix(".json") ? String(options.jsonPath.dropLast(5)) : options.jsonPath)
            + "-scaling.svg"
        if try ScalingPlot.write(fromJSON: options.jsonPath, to: svgPath) { print("plot: \(svgPath)") }
    }
} catch {
    report.failures.append("the JSON could not be written to \(options.jsonPath): \(error)")
    progress("the JSON could not be written to \(options.jsonPath): \(error)")
}
exit(report.failures.isEmpty ? 0 : 1)

// MARK: - Header helpers

func loadAverage() -> String {
    readText("/proc/loadavg").split(separator: " ").prefix(3).joined(separator: " ")
}

func machineDescription() -> String {
    let model = readText("/proc/cpuinfo").split(separator: "\n").first { $0.hasPrefix("model name") }
    return model.map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) }
        ?? "unknown CPU"
}

/// Removes the scratch folders of earlier benches that were interrupted (their pid is gone).
func removeAbandonedDirectories() {
    let temporary = NSTemporaryDirectory()
    for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
    where name.hasPrefix("micmon-bench-") {
        if let pid = Int32(name.dropFirst("micmon-bench-".count)), kill(pid, 0) != 0 && errno == ESRCH {
            try? FileManager.default.removeItem(atPath: temporary + name)
        }
    }
}

/// A warning when micmon is older than a Swift source under ./Sources (then `swift run
/// micmon-bench` measured an old build: it does not rebuild micmon).
func staleBinaryWarning(_ path: String) -> String? {
    guard let built = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
        let files = FileManager.default.enumerator(atPath: "Sources")
    else { return nil }
    for case let file as String in files where file.hasSuffix(".swift") || file.hasSuffix(".c") || file.hasSuffix(".h")
    {
        if let date = (try? FileManager.default.attributesOfItem(atPath: "Sources/" + file))?[.modificationDate]
            as? Date,
            date > built
        {
            return "\(path) is older than Sources/\(file): rebuild it (swift build -c release --product micmon)"
        }
    }
    return nil
}
