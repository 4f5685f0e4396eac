import BenchSupport
import Foundation
import Platform

// The scaling section (`--only scaling`): micmon, jack_capture (the same channels) and the bare
// client (jack_meter, one port) side by side at 2–64 channels, 48/96/192 kHz and 16- or
// 32-frame periods, one private server at a time; its table figures and its SVG plot. Main
// thread only.

/// One server configuration of the scaling section and what is recorded on it.
struct ScalingConfiguration: Codable {
    var sampleRate: Int
    var periodFrames: Int
    var channelCounts: [Int]
    /// Also a 2-channel micmon / jack_capture pair of the driver's own capture ports.
    var recordsDriverPorts: Bool

    var title: String { "\(sampleRate / 1000) kHz / \(periodFrames) frames" }

    /// The plan: 2–64 channels at 48 kHz / 32 frames (and the driver's ports), 2 and 16
    /// at 96 and 192 kHz, 2 at 16-frame periods.
    static let plan = [
        ScalingConfiguration(
            sampleRate: 48000, periodFrames: 32, channelCounts: [2, 8, 16, 32, 64], recordsDriverPorts: true),
        ScalingConfiguration(sampleRate: 96000, periodFrames: 32, channelCounts: [2, 16], recordsDriverPorts: false),
        ScalingConfiguration(sampleRate: 192_000, periodFrames: 32, channelCounts: [2, 16], recordsDriverPorts: false),
        ScalingConfiguration(sampleRate: 48000, periodFrames: 16, channelCounts: [2], recordsDriverPorts: false),
    ]
}

/// A median CPU cost per period of one program at one size, for the JSON and the plot.
struct ScalingPoint: Codable {
    var program: ProcessBench.Program
    var sampleRate: Int
    var periodFrames: Int
    var channels: Int
    /// "source" (the bench's signal source) or "driver" (system:capture_k).
    var ports: String
    var microsecondsPerPeriod: Spread
}

extension ProcessBench.Run {
    /// CPU per period of a full take, in µs.
    func microsecondsPerPeriod(periodFrames: Int, sampleRate: Int) -> Double? {
        fullUsage.map { $0.cpuSeconds / (seconds * Double(sampleRate) / Double(periodFrames)) * 1e6 }
    }
}

enum ScalingBench {
    /// Runs every configuration of `plan`: a private server and a source of as many ports as
    /// the largest take, then `rounds` rounds, each of every take (micmon and jack_capture at
    /// each channel count, the bare client once, the driver's ports), in one order in odd rounds
    /// and the reverse in even ones. Main thread.
    @MainActor
    static func run(
        plan: [ScalingConfiguration], seconds: Double, rounds: Int, micmonPath: String, directory: String,
        report: inout Report, progress: (String) -> Void
    ) {
        report.scalingPlan = plan
        for configuration in plan {
            let serverLog = directory + "/jackd-\(configuration.sampleRate)-\(configuration.periodFrames).log"
            let server: BenchServer
            do {
                server = try BenchServer(
                    name: "micmon-bench-\(getpid())-s", sampleRate: configuration.sampleRate,
                    periodFrames: configuration.periodFrames, captureChannels: 2, playbackChannels: 2,
                    logPath: serverLog)
            } catch {
                report.failures.append("scaling \(configuration.title): \(error.description)")
                continue
            }
            defer { server.stop() }
            report.scalingServers.append(server.commandLine)
            let source: SignalSource
            do {
                source = try SignalSource(
                    serverName: server.name, clientName: "micmon-bench-src",
                    channelCount: configuration.channelCounts.max() ?? 2)
            } catch {
                report.failures.append("scaling \(configuration.title): the signal source did not start: \(error)")
                continue
            }
            defer { withExtendedLifetime(source) {} }
            let bench = ProcessBench(
                server: server, sourcePorts: Array(source.portNames.prefix(2)), micmonPath: micmonPath,
                directory: directory)

            var takes: [(ProcessBench.Program, [String], String)] = []
            for count in configuration.channelCounts {
                let ports = Array(source.portNames.prefix(count))
                takes.append((.micmon, ports, "source"))
                takes.append((.micmonOff, ports, "source"))
                takes.append((.jackCapture, ports, "source"))
            }
            takes.append((.bare, [source.portNames[0]], "source"))
            if configuration.recordsDriverPorts {
                let ports = ["system:capture_1", "system:capture_2"]
                takes.append((.micmon, ports, "driver"))
                takes.append((.micmonOff, ports, "driver"))
                takes.append((.jackCapture, ports, "driver"))
            }
            // Not counted: each program once, so the first counted take is not the first to load it.
            progress("scaling \(configuration.title): warm-up")
            for program in ProcessBench.Program.allCases {
                _ = bench.run(program, .warmUp, round: 0, seconds: 2, ports: Array(source.portNames.prefix(2)))
            }
            for round in 1 ... rounds {
                progress(
                    "scaling \(configuration.title) round \(round)/\(rounds): \(takes.count) takes × \(format(seconds)) s"
                )
                for (program, ports, kind) in round % 2 == 1 ? takes : takes.reversed() {
                    if server.unexpectedEnd != nil { break }
                    var run = bench.run(program, .scaling, round: round, seconds: seconds, ports: ports)
                    run.sampleRate = configuration.sampleRate
                    run.periodFrames = configuration.periodFrames
                    run.ports = kind
                    let cost = run.microsecondsPerPeriod(
                        periodFrames: configuration.periodFrames, sampleRate: configuration.sampleRate)
                    progress(
                        "  \(program.rawValue) \(ports.count) ch (\(kind)): "
                            + (cost.map { "\(fixed($0, 2)) µs/period" } ?? "no usage")
                            + (run.failure.map { " — FAILED: \($0)" } ?? ""))
                    if let failure = run.failure {
                        report.failures.append(
                            "scaling \(configuration.title) round \(round), \(program.rawValue) \(ports.count) ch: \(failure)"
                        )
                    }
                    report.runs.append(run)
                }
                if let end = server.unexpectedEnd {
                    report.failures.append("scaling \(configuration.title): \(end)")
                    break
                }
            }
        }
        report.addScalingSections(plan: plan)
    }
}

extension ScalingBench {
    /// One long take of `channels` channels of the source at `sampleRate` / 32 frames, micmon's
    /// default analysis (none when `loudnessOff`), under `nice -n 19 stress-ng --hdd 1
    /// --temp-path DIR` (DIR its own, in `directory`; none unless `diskStress`); the table gets its CPU, drops, exactness
    /// and the server's xruns. Main thread.
    @MainActor
    static func soak(
        channels: Int, sampleRate: Int = 48000, seconds: Double, loudnessOff: Bool = false,
        diskStress: Bool = true, micmonPath: String,
        directory: String,
        report: inout Report, progress: (String) -> Void
    ) {
        let load = diskStress ? "under stress-ng --hdd 1" : "without added load"
        let section =
            "Soak: \(channels) channels at \(sampleRate / 1000) kHz / 32 frames, \(format(seconds)) s \(load)"
            + (loudnessOff ? ", --loudness-mode off" : "")
        let server: BenchServer
        do {
            server = try BenchServer(
                name: "micmon-bench-\(getpid())-k", sampleRate: sampleRate, periodFrames: 32, captureChannels: 2,
                playbackChannels: 2, logPath: directory + "/jackd-soak.log")
        } catch {
            report.failures.append("soak: \(error.description)")
            return
        }
        defer { server.stop() }
        let source: SignalSource
        do {
            // Every cycle of the take and a margin for start-up and the end (40 bytes a cycle).
            source = try SignalSource(
                serverName: server.name, clientName: "micmon-bench-src", channelCount: channels,
                traceCapacity: Int((seconds + 60) * Double(sampleRate) / 32))
        } catch {
            report.failures.append("soak: the signal source did not start: \(error)")
            return
        }
        defer { withExtendedLifetime(source) {} }
        let witness = try? Witness(
            serverName: server.name, source: source.portNames[0],
            capacity: Int((seconds + 60) * Double(sampleRate) / 32))
        if witness == nil { report.failures.append("soak: the bare witness client did not start") }
        defer { withExtendedLifetime(witness) {} }
        var stress: Child?
        if diskStress {
            let stressFolder = directory + "/stress"
            mkdir(stressFolder, 0o755)
            // setpriv --pdeathsig: stress-ng ends with the bench, however the bench ends.
            stress = try? Child(
                [
                    "setpriv", "--pdeathsig", "TERM", "nice", "-n", "19", "stress-ng", "--hdd", "1", "--temp-path",
                    stressFolder, "--quiet",
                ], stdout: directory + "/stress.out", stderr: directory + "/stress.out")
            if stress == nil { report.failures.append("soak: stress-ng did not start (Debian: stress-ng)") }
        }
        let bench = ProcessBench(
            server: server, sourcePorts: Array(source.portNames.prefix(2)), micmonPath: micmonPath,
            directory: directory)
        progress("soak: \(channels) ch for \(format(seconds)) s \(load)")
        var run = bench.run(
            loudnessOff ? .micmonOff : .micmon, .soak, round: 1, seconds: seconds, ports: source.portNames)
        stress?.stop(SIGTERM, grace: 10)
        let cycles = source.tracedCycles()
        if let keep = getenv("MICMON_BENCH_KEEP").map({ String(cString: $0) }) {
            // The source's cycles (SignalSourceCycle, 40 bytes each, little-endian) beside the take.
            let path = keep + "/source-trace.bin"
            if let file = fopen(path, "wb") {
                _ = cycles.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
                fclose(file)
                progress("soak: \(cycles.count) source cycles in \(path)")
            }
        }
        run.sampleRate = sampleRate
        run.periodFrames = 32
        run.ports = "source"
        report.runs.append(run)
        if let failure = run.failure { report.failures.append("soak: \(failure)") }
        let periods = seconds * Double(sampleRate) / 32
        figures(into: &report, section: section, run: run, periods: periods)
        // The bare client beside micmon: the source does nothing but write its ports, and sits
        // first in the graph; what the server ran without it, over the stretch of signal the take
        // holds, is what this host costs any client in the same run.
        if let start = run.take?.startFrame, let frames = run.take?.frames {
            let window = start ..< start + UInt64(frames)
            let own = SourceLosses(cycles, signalFrames: window)
            report.figures.append(
                .measured(
                    section, "the source (a bare client, first in the graph): frames the server ran without it",
                    [Double(own.frames)], unit: "frames", digits: 0))
            report.figures.append(
                .measured(section, "the source: gaps of its own", [Double(own.gaps)], unit: "gaps", digits: 0))
            // The witness, downstream of the source as micmon is, over the same stretch of time.
            let times = cycles.filter { window.contains($0.frame) }.map(\.enteredUsecs)
            if let witness, let first = times.min(), let last = times.max() {
                let bare = SourceLosses(witness.cycles(), period: 32, enteredDuring: first ... last)
                report.figures.append(
                    .measured(
                        section, "a bare client beside micmon (fed by the source): frames the server ran without it",
                        [Double(bare.frames)], unit: "frames", digits: 0))
                report.figures.append(
                    .measured(section, "the bare client: gaps of its own", [Double(bare.gaps)], unit: "gaps", digits: 0)
                )
            }
        }
    }

    private static func figures(into report: inout Report, section: String, run: ProcessBench.Run, periods: Double) {
        report.figures.append(
            .measured(
                section, "micmon CPU per period", run.fullUsage.map { [$0.cpuSeconds / periods * 1e6] } ?? [],
                unit: "µs", digits: 2))
        report.figures.append(
            .measured(
                section, "frames dropped", run.dropped.map { [Double($0)] } ?? [], unit: "frames", digits: 0,
                threshold: report.threshold("scaling_frames_dropped")))
        report.figures.append(
            .measured(section, "server xruns seen", run.xruns.map { [Double($0)] } ?? [], unit: "xruns", digits: 0))
        report.figures.append(
            .measured(
                section, "server gaps (graph-wide, not drops)", run.droppedByServer.map { [Double($0)] } ?? [],
                unit: "frames", digits: 0))
        let exact = run.take?.bitExact == true
        report.figures.append(
            .verdict(
                section, "bit-exact on every channel",
                exact
                    ? "yes" : "no" + (run.take.map { " (\($0.mismatchedFrames) of \($0.frames) frames differ)" } ?? ""),
                met: exact))
        // A take that ended 75: the frames between its reported losses are still judged.
        if let take = run.take, let outside = take.exactOutsideListedDrops {
            report.figures.append(
                .verdict(
                    section, "bit-exact outside its listed drops",
                    (outside ? "yes" : "no (\(take.mismatchedFrames) frames differ)")
                        + ", \(take.framesInListedDrops ?? 0) frames of silence in them"
                        + (take.shiftsBesideDrops.isEmpty
                            ? "" : "; a period out of place beside \(take.shiftsBesideDrops.count) of them")
                        + (take.dropsTheSourceFellBehindAt > 0
                            ? "; the source fell \(take.framesTheSourceFellBehind) frames behind the server at "
                                + "\(take.dropsTheSourceFellBehindAt) of them" : ""),
                    met: outside))
        }
        report.addThreadFigures(section, "micmon", [run], periods: { _ in periods })
    }
}

extension Report {
    /// The scaling runs of one configuration, program, channel count and kind of port.
    func scalingRuns(
        _ configuration: ScalingConfiguration, _ program: ProcessBench.Program, channels: Int?, ports: String
    ) -> [ProcessBench.Run] {
        runs.filter {
            $0.purpose == .scaling && $0.sampleRate == configuration.sampleRate
                && $0.periodFrames == configuration.periodFrames && $0.program == program
                && (channels == nil || $0.channels == channels) && $0.ports == ports
        }
    }

    /// Table figures for each configuration: CPU per period of the programs (micmon with its
    /// analysis thread, A, and with `--loudness-mode off`, O), the ratios of medians and round by
    /// round, CPU per period of each thread role, private memory, bit-exactness and drops; and
    /// `scaling`, the points of the plot. The targets are held by O: jack_capture computes no
    /// loudness, so O is the like-for-like recorder; A's figures are reported beside it.
    mutating func addScalingSections(plan: [ScalingConfiguration]) {
        scaling = []
        let micmons: [(ProcessBench.Program, String)] = [
            (.micmon, "A micmon"), (.micmonOff, "O micmon --loudness-mode off"),
        ]
        for configuration in plan {
            let section =
                "Scaling \(configuration.title): micmon (A; O with --loudness-mode off) vs jack_capture (B, same ports) "
                + "vs bare (C, 1 port)"
            let rate = configuration.sampleRate
            let frames = configuration.periodFrames
            let isMain = rate == 48000 && frames == 32
            func costs(_ runs: [ProcessBench.Run]) -> [Double] {
                runs.compactMap { $0.microsecondsPerPeriod(periodFrames: frames, sampleRate: rate) }
            }
            /// Same-round ratios of `a` over `b`.
            func roundRatios(_ a: [ProcessBench.Run], _ b: [ProcessBench.Run]) -> [Double] {
                a.compactMap { run in
                    let other = b.first { $0.round == run.round }
                    return ratio(
                        run.microsecondsPerPeriod(periodFrames: frames, sampleRate: rate),
                        other?.microsecondsPerPeriod(periodFrames: frames, sampleRate: rate))
                }
            }
            let periods = { (run: ProcessBench.Run) in run.seconds * Double(rate) / Double(frames) }
            let bareRuns = scalingRuns(configuration, .bare, channels: nil, ports: "source")
            let bare = costs(bareRuns)
            figures.append(
                .measured(section, "C bare (jack_meter, 1 port): CPU per period", bare, unit: "µs", digits: 2))
            if let spread = Spread(bare) {
                scaling.append(
                    ScalingPoint(
                        program: .bare, sampleRate: rate, periodFrames: frames, channels: 1, ports: "source",
                        microsecondsPerPeriod: spread))
            }
            var micmonMedians: [ProcessBench.Program: [(Double, Double)]] = [:]
            var kinds = configuration.channelCounts.map { ($0, "source") }
            if configuration.recordsDriverPorts { kinds.append((2, "driver")) }
            for (count, kind) in kinds {
                let label = kind == "driver" ? "2 ch, driver's capture ports" : "\(count) ch"
                let keyTail = kind == "driver" ? "driver_ports" : "\(count)"
                let captureRuns = scalingRuns(configuration, .jackCapture, channels: count, ports: kind)
                let capture = costs(captureRuns)
                figures.append(
                    .measured(section, "\(label): B jack_capture CPU per period", capture, unit: "µs", digits: 2))
                for (program, name) in micmons {
                    let letter = String(name.prefix(1))
                    let runs = scalingRuns(configuration, program, channels: count, ports: kind)
                    let cost = costs(runs)
                    // The targets are the like-for-like recorder's: micmon without the analysis.
                    let holdsTargets = isMain && program == .micmonOff
                    figures.append(.measured(section, "\(label): \(name) CPU per period", cost, unit: "µs", digits: 2))
                    figures.append(
                        .ratio(
                            section, "\(label): \(letter) / B", ratio(Spread(cost)?.median, Spread(capture)?.median),
                            threshold: holdsTargets ? threshold("scaling_vs_jack_capture_\(keyTail)") : nil))
                    figures.append(
                        .measured(
                            section, "\(label): \(letter) / B round by round", roundRatios(runs, captureRuns),
                            unit: "×", digits: 2))
                    if kind == "source" {
                        figures.append(
                            .ratio(
                                section, "\(label): \(letter) / C", ratio(Spread(cost)?.median, Spread(bare)?.median),
                                threshold: holdsTargets ? threshold("scaling_vs_bare_\(count)") : nil))
                        figures.append(
                            .measured(
                                section, "\(label): \(letter) / C round by round", roundRatios(runs, bareRuns),
                                unit: "×", digits: 2))
                        if let median = Spread(cost)?.median {
                            micmonMedians[program, default: []].append((Double(count), median))
                        }
                    }
                    figures.append(
                        .measured(
                            section, "\(label): \(letter) vol. ctx switches / period",
                            runs.compactMap { run in run.fullUsage.map { Double($0.voluntarySwitches) / periods(run) }
                            },
                            unit: "", digits: 3))
                    figures.append(
                        .measured(
                            section, "\(label): \(letter) private memory",
                            runs.compactMap(\.fullUsage?.peakPrivateMegabytes), unit: "MB", digits: 1))
                    addThreadFigures(section, "\(label): \(letter)", runs, periods: periods)
                }
                figures.append(
                    .measured(
                        section, "\(label): B jack_capture private memory",
                        captureRuns.compactMap(\.fullUsage?.peakPrivateMegabytes), unit: "MB", digits: 1))
                addThreadFigures(section, "\(label): B", captureRuns, periods: periods)
                for (program, name) in micmons + [(.jackCapture, "B jack_capture")] {
                    let runs = scalingRuns(configuration, program, channels: count, ports: kind)
                    let letter = String(name.prefix(1))
                    let exact = runs.filter { $0.take?.bitExact == true }.count
                    let text = runs.isEmpty ? "n/a" : (exact == runs.count ? "yes" : "no") + " (\(exact)/\(runs.count))"
                    figures.append(.verdict(section, "\(label): bit-exact \(letter)", text, met: exact == runs.count))
                    if let spread = Spread(costs(runs)) {
                        scaling.append(
                            ScalingPoint(
                                program: program, sampleRate: rate, periodFrames: frames, channels: count,
                                ports: kind, microsecondsPerPeriod: spread))
                    }
                }
            }
            for (program, name) in micmons {
                let letter = String(name.prefix(1))
                let all =
                    scalingRuns(configuration, program, channels: nil, ports: "source")
                    + scalingRuns(configuration, program, channels: nil, ports: "driver")
                figures.append(
                    .measured(
                        section, "\(letter) frames dropped, all takes",
                        [Double(all.compactMap(\.dropped).reduce(0, +))], unit: "frames", digits: 0,
                        threshold: isMain && program == .micmonOff ? threshold("scaling_frames_dropped") : nil))
            }
            let captures = scalingRuns(configuration, .jackCapture, channels: nil, ports: "source")
            figures.append(
                .measured(
                    section, "B jack_capture overruns, all takes",
                    [Double(captures.compactMap(\.dropped).reduce(0, +))],
                    unit: "periods", digits: 0))
            for (program, name) in micmons {
                guard let medians = micmonMedians[program], medians.count >= 3 else { continue }
                figures.append(
                    .measured(
                        section, "\(name): added CPU per channel per period (least squares)", [slope(medians)],
                        unit: "µs", digits: 3,
                        threshold: isMain && program == .micmonOff ? threshold("scaling_per_channel_us") : nil))
            }
        }
    }

    /// CPU per period of each thread role of `runs` (median over the takes): the realtime
    /// (SCHED_FIFO) thread, each named thread (micmon-writer, micmon-analysis, …) and the rest
    /// together ("other": the main thread, libjack's notification thread, …).
    mutating func addThreadFigures(
        _ section: String, _ label: String, _ runs: [ProcessBench.Run], periods: (ProcessBench.Run) -> Double
    ) {
        var byRole: [String: [Double]] = [:]
        for run in runs {
            guard let threads = run.fullUsage?.threads else { continue }
            var sums: [String: Double] = [:]
            for thread in threads {
                let role = thread.isRealtime || thread.name.hasPrefix("micmon-") ? thread.role : "other"
                sums[role, default: 0] += thread.cpuSeconds
            }
            for (role, seconds) in sums { byRole[role, default: []].append(seconds / periods(run) * 1e6) }
        }
        for role in byRole.keys.sorted() {
            figures.append(
                .measured(section, "\(label) thread \(role): CPU per period", byRole[role]!, unit: "µs", digits: 2))
        }
    }
}

/// The least-squares slope of y over x.
func slope(_ points: [(Double, Double)]) -> Double {
    let n = Double(points.count)
    let mx = points.map(\.0).reduce(0, +) / n
    let my = points.map(\.1).reduce(0, +) / n
    let sxy = points.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +)
    let sxx = points.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
    return sxx > 0 ? sxy / sxx : .nan
}

/// The plot of docs/benchmarks.md: CPU per period against channel count at 48 kHz / 32 frames,
/// one line per program (the bare client's one port as a level line), medians with min–max
/// bars, made from the bench's JSON (`Report.scaling`).
enum ScalingPlot {
    static func svg(_ report: Report) -> String? {
        let points = report.scaling.filter { $0.sampleRate == 48000 && $0.periodFrames == 32 && $0.ports == "source" }
        guard !points.isEmpty else { return nil }
        let width = 640.0
        let height = 400.0
        let left = 64.0
        let right = 170.0
        let top = 30.0
        let bottom = 50.0
        let channels = points.filter { $0.program != .bare }.map(\.channels)
        let maxChannels = Double(channels.max() ?? 64)
        let maxCost = (points.map(\.microsecondsPerPeriod.max).max() ?? 1) * 1.1
        func x(_ c: Double) -> Double { left + (c / maxChannels) * (width - left - right) }
        func y(_ v: Double) -> Double { height - bottom - (v / maxCost) * (height - top - bottom) }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="18" font-size="14">CPU per 32-frame period at 48 kHz (median, min–max), \(report.date)</text>

            """
        // Axes and grid.
        svg += "<line x1=\"\(left)\" y1=\"\(y(0))\" x2=\"\(width - right)\" y2=\"\(y(0))\" stroke=\"black\"/>\n"
        svg += "<line x1=\"\(left)\" y1=\"\(y(0))\" x2=\"\(left)\" y2=\"\(top)\" stroke=\"black\"/>\n"
        let step = niceStep(maxCost / 5)
        var tick = 0.0
        while tick <= maxCost {
            svg +=
                "<line x1=\"\(left)\" y1=\"\(y(tick))\" x2=\"\(width - right)\" y2=\"\(y(tick))\" stroke=\"#ddd\"/>\n"
            svg +=
                "<text x=\"\(left - 6)\" y=\"\(y(tick) + 4)\" text-anchor=\"end\">\(fixed(tick, step < 1 ? 1 : 0))</text>\n"
            tick += step
        }
        for c in Set(channels).sorted() {
            svg += "<text x=\"\(x(Double(c)))\" y=\"\(y(0) + 16)\" text-anchor=\"middle\">\(c)</text>\n"
        }
        svg += "<text x=\"\((left + width - right) / 2)\" y=\"\(height - 12)\" text-anchor=\"middle\">channels</text>\n"
        svg +=
            "<text x=\"16\" y=\"\((top + height - bottom) / 2)\" transform=\"rotate(-90 16 \((top + height - bottom) / 2))\" text-anchor=\"middle\">µs of CPU per period</text>\n"
        let styles: [(ProcessBench.Program, String, String)] = [
            (.micmon, "#1f77b4", "micmon"), (.micmonOff, "#9467bd", "micmon, loudness off"),
            (.jackCapture, "#d62728", "jack_capture"), (.bare, "#2ca02c", "jack_meter (1 port)"),
        ]
        for (index, (program, colour, name)) in styles.enumerated() {
            let mine = points.filter { $0.program == program }.sorted { $0.channels < $1.channels }
            guard !mine.isEmpty else { continue }
            if program == .bare, let level = mine.first {
                let v = y(level.microsecondsPerPeriod.median)
                svg +=
                    "<line x1=\"\(left)\" y1=\"\(v)\" x2=\"\(width - right)\" y2=\"\(v)\" stroke=\"\(colour)\" stroke-dasharray=\"6 4\" stroke-width=\"2\"/>\n"
            } else {
                let path = mine.map { "\(x(Double($0.channels))),\(y($0.microsecondsPerPeriod.median))" }
                    .joined(separator: " ")
                svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
                for point in mine {
                    let px = x(Double(point.channels))
                    svg +=
                        "<line x1=\"\(px)\" y1=\"\(y(point.microsecondsPerPeriod.min))\" x2=\"\(px)\" y2=\"\(y(point.microsecondsPerPeriod.max))\" stroke=\"\(colour)\"/>\n"
                    svg +=
                        "<circle cx=\"\(px)\" cy=\"\(y(point.microsecondsPerPeriod.median))\" r=\"3\" fill=\"\(colour)\"/>\n"
                }
            }
            let ly = top + 20 + Double(index) * 20
            svg +=
                "<line x1=\"\(width - right + 10)\" y1=\"\(ly)\" x2=\"\(width - right + 30)\" y2=\"\(ly)\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
            svg += "<text x=\"\(width - right + 34)\" y=\"\(ly + 4)\">\(name)</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// 1, 2 or 5 × a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0 else { return 1 }
        let power = Foundation.pow(10, Foundation.floor(Foundation.log10(raw)))
        for factor in [1.0, 2, 5, 10] where factor * power >= raw { return factor * power }
        return 10 * power
    }

    /// Reads the bench's JSON at `jsonPath` and writes its plot to `svgPath`; false when the
    /// JSON holds no scaling points.
    static func write(fromJSON jsonPath: String, to svgPath: String) throws -> Bool {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let report = try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: jsonPath)))
        guard let text = svg(report) else { return false }
        try Data(text.utf8).write(to: URL(fileURLWithPath: svgPath))
        return true
    }
}

/// The cycles the server ran without a traced client (the source, or the bare witness): each
/// traced cycle whose counter moved on by more than the period before it (its own gap), over the
/// cycles that rendered the given stretch of the signal, or that were entered within a stretch of
/// time. Main thread.
struct SourceLosses {
    var gaps = 0
    var frames = 0

    init(_ cycles: [SignalSourceCycle], signalFrames: Range<UInt64>) {
        self.init(cycles.map { ($0.counter, Int($0.frameCount), signalFrames.contains($0.frame)) })
    }

    /// The same of the witness (`period` frames a cycle) over the cycles entered within `time`
    /// (JACK µs): it renders no signal.
    init(_ cycles: [Witness.Cycle], period: Int, enteredDuring time: ClosedRange<UInt64>) {
        self.init(cycles.map { ($0.cycleStartFrame, period, time.contains($0.enteredUsecs)) })
    }

    /// Each cycle's counter and frames, and whether it is counted.
    private init(_ cycles: [(counter: UInt32, frames: Int, isCounted: Bool)]) {
        for (previous, cycle) in zip(cycles, cycles.dropFirst()) where cycle.isCounted {
            let step = Int(cycle.counter &- previous.counter)
            if step > previous.frames {
                gaps += 1
                frames += step - previous.frames
            }
        }
    }
}
