// Turns the measurements of each section into table figures. Every ratio is of two medians
// measured in this same run.

extension Report {
    mutating func addRing(_ result: RingBench.Result, blocks: Int) {
        let section =
            "Ring: 2 threads pinned to processors 0 and 1, \(blocks) blocks of 128 floats through 64 KiB, \(result.micmonBlocksPerSecond.count) runs each"
        let micmon = result.micmonBlocksPerSecond.map { $0 / 1e6 }
        let jack = result.jackBlocksPerSecond.map { $0 / 1e6 }
        figures.append(
            .measured(section, "micmon SPSCRing<Float> (slices + commit)", micmon, unit: "M blocks/s", digits: 2))
        figures.append(
            .measured(section, "libjack jack_ringbuffer_t (write/read)", jack, unit: "M blocks/s", digits: 2))
        figures.append(
            .ratio(
                section, "micmon / jack", ratio(Spread(micmon)?.median, Spread(jack)?.median),
                threshold: threshold("ring_vs_jack")))
        if result.orderErrors > 0 { failures.append("ring: \(result.orderErrors) blocks arrived out of order") }
    }

    mutating func addMeters(_ results: [MeterBench.Result]) {
        guard let first = results.first else { return }
        let section =
            "Meters: ChannelMeter.processStereo (2 channels), median of \(first.nanosecondsPerPeriod.count) repeats"
        for result in results {
            let frames = Double(result.periodFrames)
            let periodNanoseconds = frames / Double(sampleRate) * 1e9
            if result.periodFrames == first.periodFrames {
                figures.append(
                    .measured(
                        section, "cost per frame (both channels)", result.nanosecondsPerPeriod.map { $0 / frames },
                        unit: "ns", digits: 2, threshold: threshold("meter_ns_per_frame")))
            }
            figures.append(
                .measured(
                    section, "\(result.periodFrames)-frame period: time", result.nanosecondsPerPeriod.map { $0 / 1000 },
                    unit: "µs", digits: 3))
            figures.append(
                .measured(
                    section, "\(result.periodFrames)-frame period: share of \(fixed(periodNanoseconds / 1000, 1)) µs",
                    result.nanosecondsPerPeriod.map { $0 / periodNanoseconds * 100 }, unit: "%", digits: 3,
                    threshold: threshold("meter_share_\(result.periodFrames)")))
        }
    }

    mutating func addDenoise(_ results: [DenoiseBench.Result]) {
        guard let first = results.first else { return }
        let section =
            "Noise suppressor (--denoise): NoiseSuppressor.process on 2 inputs, median of \(first.nanosecondsPerPeriod.count) repeats"
        for result in results {
            let frames = Double(result.periodFrames)
            let periodNanoseconds = frames / Double(sampleRate) * 1e9
            // The standard mode keeps the thresholds' names; the low-latency mode's figures say so.
            let isStandard = result.latency == "standard"
            let mode = isStandard ? "" : " (--denoise-latency \(result.latency))"
            let suffix = isStandard ? "" : "_\(result.latency)"
            figures.append(
                .measured(
                    section, "cost per frame" + mode, result.nanosecondsPerPeriod.map { $0 / frames }, unit: "ns",
                    digits: 2, threshold: isStandard ? threshold("denoise_ns_per_frame") : nil))
            figures.append(
                .measured(
                    section,
                    "\(result.periodFrames)-frame period: mean share of \(fixed(periodNanoseconds / 1000, 1)) µs"
                        + mode,
                    result.nanosecondsPerPeriod.map { $0 / periodNanoseconds * 100 }, unit: "%", digits: 3,
                    threshold: threshold("denoise_share_\(result.periodFrames)" + suffix)))
            figures.append(
                .measured(
                    section, "\(result.periodFrames)-frame period: 99.9th-percentile period" + mode,
                    result.percentilePeriodNanoseconds.map { $0 / periodNanoseconds * 100 }, unit: "%", digits: 3,
                    threshold: threshold("denoise_worst_\(result.periodFrames)" + suffix)))
            figures.append(
                .measured(
                    section, "\(result.periodFrames)-frame period: longest period (with preemption)" + mode,
                    result.worstPeriodNanoseconds.map { $0 / periodNanoseconds * 100 }, unit: "%", digits: 3,
                    threshold: nil))
        }
    }

    mutating func addLoudness(_ result: LoudnessBench.Result) {
        let section =
            "Loudness (issue 20): capture kernel, \(result.periodFrames)-frame periods, median of \(result.recordNanoseconds.count) repeats"
        figures.append(
            .measured(section, "record before (capture ring, meters)", result.recordNanoseconds, unit: "ns", digits: 0))
        figures.append(
            .measured(section, "record now (+ analysis ring)", result.withAnalysisNanoseconds, unit: "ns", digits: 0))
        let before = Spread(result.recordNanoseconds)?.median ?? .nan
        let after = Spread(result.withAnalysisNanoseconds)?.median ?? .nan
        figures.append(
            .measured(
                section, "kernel: added cost (ratio of medians)", [(after / before - 1) * 100], unit: "%", digits: 1,
                threshold: threshold("loudness_kernel_overhead_percent")))
        figures.append(
            .measured(
                section, "analysis thread: CPU per s of 2-ch audio", [result.analysisCPUPerAudioSecond * 1000],
                unit: "ms", digits: 2))
        figures.append(
            .measured(
                section, "analysis thread with --meter vu", [result.analysisWithVUCPUPerAudioSecond * 1000],
                unit: "ms", digits: 2))
    }

    mutating func addReportFloor(_ result: ReportFloorBench.Result) {
        if let failure = result.failure {
            failures.append(failure)
            return
        }
        let section =
            "Report floor (issue 20): libebur128 alone, integrated + LRA per channel, on \(result.path) (\(fixed(result.seconds, 1)) s, \(result.channels) ch), \(result.cpuSeconds.count) passes"
        figures.append(.measured(section, "CPU (user + sys) per pass", result.cpuSeconds, unit: "s", digits: 3))
        figures.append(
            .measured(
                section, "CPU per hour of audio", result.cpuSeconds.map { $0 * 3600 / max(result.seconds, 1e-9) },
                unit: "s", digits: 3))
        for (index, integrated) in result.integratedLUFS.enumerated() {
            let range = index < result.loudnessRangeLU.count ? result.loudnessRangeLU[index] : .nan
            figures.append(
                .verdict(
                    section, "ch\(index + 1): integrated, LRA",
                    "\(fixed(integrated, 2)) LUFS, \(fixed(range, 2)) LU"))
        }
    }

    /// micmon `record` plain (A) and with `--pre-roll 10 --split 10s` (R), side by side: CPU,
    /// context switches, drops, bit-exactness (R's files concatenated).
    mutating func addRotation(seconds: Double, rounds: Int) {
        let section =
            "Rotation: micmon record (A) vs record --pre-roll 10 --split 10s (R): \(format(seconds)) s takes, A R / R A × \(rounds) rounds"
        let counted = runs.filter { $0.purpose == .rotation }
        let plain = counted.filter { $0.rotating != true }
        let rotating = counted.filter { $0.rotating == true }
        let cpuPlain = plain.compactMap(\.fullUsage).map(\.cpuSeconds)
        let cpuRotating = rotating.compactMap(\.fullUsage).map(\.cpuSeconds)
        figures.append(.measured(section, "CPU time  A record", cpuPlain, unit: "s", digits: 3))
        figures.append(
            .measured(section, "CPU time  R record --pre-roll 10 --split 10s", cpuRotating, unit: "s", digits: 3))
        figures.append(
            .ratio(
                section, "CPU  R / A", ratio(Spread(cpuRotating)?.median, Spread(cpuPlain)?.median),
                threshold: threshold("rotation_cpu_vs_record")))
        let roundRatios = Set(counted.map(\.round)).sorted().compactMap { round -> Double? in
            ratio(
                rotating.first { $0.round == round }?.fullUsage?.cpuSeconds,
                plain.first { $0.round == round }?.fullUsage?.cpuSeconds)
        }
        figures.append(.measured(section, "CPU  R / A, round by round", roundRatios, unit: "×", digits: 3))
        figures.append(
            .measured(
                section, "peak RSS  A record", plain.compactMap(\.fullUsage).map(\.peakRSSMegabytes), unit: "MB",
                digits: 1))
        figures.append(
            .measured(
                section, "peak RSS  R rotating", rotating.compactMap(\.fullUsage).map(\.peakRSSMegabytes), unit: "MB",
                digits: 1))
        for (takes, name) in [(plain, "A record"), (rotating, "R rotating")] {
            figures.append(
                .measured(
                    section, "frames dropped  \(name)", takes.compactMap(\.dropped).map(Double.init), unit: "frames",
                    digits: 0))
            let exact = takes.filter { $0.take?.bitExact == true }.count
            let text = takes.isEmpty ? "n/a" : (exact == takes.count ? "yes" : "no") + " (\(exact)/\(takes.count))"
            figures.append(.verdict(section, "bit-exact  \(name)", text))
        }
    }

    mutating func addProcessRuns(seconds: Double, rounds: Int, periodsPerSecond: Double, maxStealPercent: Double) {
        let section =
            "micmon (A) vs jack_capture (B) vs bare client (C): 2 ports, \(format(seconds)) s takes, A B C / C B A × \(rounds) rounds"
        let counted = runs.filter { $0.purpose == .comparison }
        func usages(_ program: ProcessBench.Program) -> [ChildUsage] {
            counted.filter { $0.program == program }.compactMap(\.fullUsage)
        }
        let names: [(ProcessBench.Program, String)] = [
            (.micmon, "A micmon"), (.jackCapture, "B jack_capture"), (.bare, "C bare (jack_meter)"),
        ]
        let periods = seconds * periodsPerSecond

        func compare(
            _ title: String, unit: String, digits: Int, _ value: (ChildUsage) -> Double,
            targets: [ProcessBench.Program: Threshold] = [:]
        ) -> [ProcessBench.Program: Double] {
            var medians: [ProcessBench.Program: Double] = [:]
            for (program, name) in names {
                let values = usages(program).map(value)
                figures.append(
                    .measured(
                        section, "\(title)  \(name)", values, unit: unit, digits: digits,
                        threshold: targets[program]))
                medians[program] = Spread(values)?.median
            }
            return medians
        }

        let cpu = compare("CPU time", unit: "s", digits: 3, \.cpuSeconds)
        _ = compare("CPU", unit: "% of a core", digits: 2, { $0.cpuSeconds / seconds * 100 })
        let micmonCPU = cpu[.micmon]
        figures.append(
            .ratio(
                section, "CPU  micmon / jack_capture", ratio(micmonCPU, cpu[.jackCapture]),
                threshold: threshold("cpu_vs_jack_capture")))
        figures.append(
            .ratio(section, "CPU  micmon / bare", ratio(micmonCPU, cpu[.bare]), threshold: threshold("cpu_vs_bare")))
        // The same ratio within each round (the two takes ran minutes apart at most): its spread
        // is the machine's noise, which moves this ratio more than any other figure.
        let roundRatios = Set(counted.map(\.round)).sorted().compactMap { round -> Double? in
            let take = { (program: ProcessBench.Program) in
                counted.first { $0.round == round && $0.program == program }?.fullUsage?.cpuSeconds
            }
            return ratio(take(.micmon), take(.bare))
        }
        figures.append(.measured(section, "CPU  micmon / bare, round by round", roundRatios, unit: "×", digits: 2))

        let switchesTarget = threshold("micmon_switches_per_period")
        let switches = compare(
            "vol. ctx switches / period", unit: "", digits: 3, { Double($0.voluntarySwitches) / periods },
            targets: switchesTarget.map { [.micmon: $0] } ?? [:])
        figures.append(
            .ratio(
                section, "vol. ctx switches  micmon / jack_capture",
                ratio(switches[.micmon], switches[.jackCapture])))
        figures.append(.ratio(section, "vol. ctx switches  micmon / bare", ratio(switches[.micmon], switches[.bare])))

        let memory = compare("peak RSS", unit: "MB", digits: 1, \.peakRSSMegabytes)
        figures.append(.ratio(section, "peak RSS  micmon / jack_capture", ratio(memory[.micmon], memory[.jackCapture])))
        figures.append(.ratio(section, "peak RSS  micmon / bare", ratio(memory[.micmon], memory[.bare])))

        for (program, name) in names where program != .bare {
            let takes = counted.filter { $0.program == program }
            let exact = takes.filter { $0.take?.bitExact == true }.count
            let text = takes.isEmpty ? "n/a" : (exact == takes.count ? "yes" : "no") + " (\(exact)/\(takes.count))"
            figures.append(.verdict(section, "bit-exact  \(name)", text))
        }
        let micmonRuns = counted.filter { $0.program == .micmon }
        let captureRuns = counted.filter { $0.program == .jackCapture }
        figures.append(
            .measured(
                section, "frames dropped  A micmon", micmonRuns.compactMap(\.dropped).map(Double.init),
                unit: "frames", digits: 0))
        figures.append(
            .measured(
                section, "server gaps (graph-wide, not drops)  A micmon",
                micmonRuns.compactMap(\.droppedByServer).map(Double.init), unit: "frames", digits: 0))
        figures.append(
            .measured(
                section, "overruns  B jack_capture", captureRuns.compactMap(\.dropped).map(Double.init),
                unit: "periods", digits: 0))
        figures.append(
            .measured(
                section, "server xruns seen  A micmon", micmonRuns.compactMap(\.xruns).map(Double.init),
                unit: "xruns", digits: 0))
        figures.append(
            .measured(
                section, "server xruns seen  B jack_capture", captureRuns.compactMap(\.xruns).map(Double.init),
                unit: "xruns", digits: 0))
        // Not a figure of the programs: how disturbed the machine was while they ran.
        figures.append(
            .measured(
                section, "host steal during the counted takes (/proc/stat)", counted.compactMap(\.stealPercent),
                unit: "%", digits: 1))
        let retaken = runs.filter { $0.purpose == .disturbed }.count / names.count
        figures.append(
            .verdict(section, "rounds taken again (host steal over \(fixed(maxStealPercent, 1)) %)", "\(retaken)"))
    }
}

func ratio(_ numerator: Double?, _ denominator: Double?) -> Double? {
    guard let numerator, let denominator, denominator > 0 else { return nil }
    return numerator / denominator
}
