import Foundation
import Glibc
import Platform

// micmon-soak [--seconds S] [--period N] [--micmon PATH] [--jack-priority P] [--recorder record|meter|none] [--witness on]
// Records a deterministic source for S seconds (default 600) at N frames (default 32) per period
// on a private jackd -S dummy server while stress-ng loads the disk and one core; exits 1 when
// micmon dropped a frame, changed a sample or grew its memory. `--jack-priority` is jackd's -P;
// `--recorder meter|none` is a control run: a bare jack_meter, or no listener at all, in place
// of micmon, to see what the server does without it. MICMON_SOAK_KEEP=1 keeps the take, the
// logs (micmon's, jackd's), the source's cycle trace and the RSS samples; `--witness on` adds a
// bare client beside micmon that traces what it is given each cycle (Benchmarks/BenchSupport/Witness.swift).
var soak = Soak()
soak.micmon =
    URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("micmon").path
var arguments = Array(CommandLine.arguments.dropFirst())
while let option = arguments.first {
    arguments.removeFirst()
    guard let value = arguments.first else {
        print("micmon-soak: \(option) needs a value")
        exit(64)
    }
    arguments.removeFirst()
    switch option {
    case "--seconds": soak.seconds = Double(value) ?? soak.seconds
    case "--period": soak.periodFrames = Int(value) ?? soak.periodFrames
    case "--micmon": soak.micmon = value
    case "--jack-priority": soak.jackPriority = Int(value)
    case "--witness": soak.runsWitness = value == "on"
    case "--recorder":
        guard let recorder = Soak.Recorder(rawValue: value) else {
            print("micmon-soak: --recorder is record, meter or none")
            exit(64)
        }
        soak.recorder = recorder
    default:
        print("micmon-soak: unknown option \(option)")
        exit(64)
    }
}
let priority = soak.jackPriority.map { "-P \($0)" } ?? "default priority"
let listener = soak.recorder == .record ? soak.micmon : "control: \(soak.recorder.rawValue)"
print(
    "micmon-soak: \(Int(soak.seconds)) s at \(soak.periodFrames) frames / 48 kHz, jackd -S dummy (\(priority)), \(listener)"
)
do {
    let outcome = try soak.run()
    let notFinished = outcome.clientsNotFinished.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
        separator: ", ")
    print(
        """
        stress:          \(outcome.stress)
        server:          \(outcome.serverLateWakeups) late wake-ups (xruns), \(outcome.serverSkippedGraphCycles) cycles without the graph run; not finished in time: \(notFinished.isEmpty ? "none" : notFinished)
        source:          \(outcome.sourceCycles) cycles, \(outcome.sourceXruns) xruns reported, frame counter jumped \(outcome.sourceGaps) times (\(outcome.sourceGapFrames) frames)
        """)
    if outcome.witnessCycles > 0 {
        let lostFrames = outcome.witnessLost.reduce(0) { $0 + $1.frames }
        print(
            "witness:         \(outcome.witnessCycles) cycles; source frames it was never given: \(lostFrames) in \(outcome.witnessLost.count) runs"
        )
    }
    if soak.recorder != .record {
        print(
            "listener exit:   \(outcome.exitCode)\nRSS start / end / max: \(outcome.rssStartKiB) / \(outcome.rssEndKiB) / \(outcome.rssMaxKiB) KiB\ncontrol: done"
        )
        exit(0)
    }
    print(
        """
        micmon exit:     \(outcome.exitCode)
        frames:          \(outcome.frames) (expected \(outcome.expectedFrames))
        frames dropped:  \(outcome.framesDropped.map(String.init) ?? "?") (missed: \(outcome.framesMissed.map(String.init) ?? "?"), timeline jitter: \(outcome.timelineJitter.map(String.init) ?? "?"))
        xruns seen:      \(outcome.xruns.map(String.init) ?? "?") (events)
        sample mismatch: \(outcome.mismatches)
        RSS start / end: \(outcome.rssStartKiB) KiB / \(outcome.rssEndKiB) KiB (\(outcome.rssEndKiB - outcome.rssStartKiB >= 0 ? "+" : "")\(outcome.rssEndKiB - outcome.rssStartKiB) KiB), max \(outcome.rssMaxKiB) KiB
        """)
    // Without stress-ng the soak still runs, unloaded; under CI (CI=true) that is a failure.
    let underCI = ProcessInfo.processInfo.environment["CI"] == "true"
    let fatal = outcome.failures.filter { underCI || !$0.hasPrefix("stress-ng is not installed") }
    for failure in outcome.failures { print("  - \(failure)") }
    if fatal.isEmpty {
        print("soak: passed")
    } else if outcome.onlyServerLosses {
        print(
            "soak: FAILED, by the server alone: every jump in the take is source frames the witness (a bare client beside micmon) was never given either"
        )
    } else {
        print("soak: FAILED")
    }
    exit(fatal.isEmpty ? 0 : 1)
} catch {
    print("micmon-soak: \(error)")
    exit(1)
}
