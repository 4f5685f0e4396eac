import Foundation
import Glibc

// micmon-soak [--seconds S] [--period N] [--micmon PATH]
// Records a deterministic source for S seconds (default 600) at N frames (default 32) per period
// on a private jackd -S dummy server while stress-ng loads the disk and one core; exits 1 when
// micmon dropped a frame, changed a sample or grew its memory.
var soak = Soak()
soak.micmon = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("micmon").path
var arguments = Array(CommandLine.arguments.dropFirst())
while let option = arguments.first {
    arguments.removeFirst()
    guard let value = arguments.first else { print("micmon-soak: \(option) needs a value"); exit(64) }
    arguments.removeFirst()
    switch option {
    case "--seconds": soak.seconds = Double(value) ?? soak.seconds
    case "--period": soak.periodFrames = Int(value) ?? soak.periodFrames
    case "--micmon": soak.micmon = value
    default: print("micmon-soak: unknown option \(option)"); exit(64)
    }
}
print("micmon-soak: \(Int(soak.seconds)) s at \(soak.periodFrames) frames / 48 kHz, jackd -S dummy, \(soak.micmon)")
do {
    let outcome = try soak.run()
    print("""
    stress:          \(outcome.stress)
    micmon exit:     \(outcome.exitCode)
    frames:          \(outcome.frames) (expected \(outcome.expectedFrames))
    frames dropped:  \(outcome.framesDropped.map(String.init) ?? "?")
    xruns seen:      \(outcome.xruns.map(String.init) ?? "?")
    sample mismatch: \(outcome.mismatches)
    RSS start / end: \(outcome.rssStartKiB) KiB / \(outcome.rssEndKiB) KiB (\(outcome.rssEndKiB - outcome.rssStartKiB >= 0 ? "+" : "")\(outcome.rssEndKiB - outcome.rssStartKiB) KiB)
    """)
    let fatal = outcome.failures.filter { !$0.hasPrefix("stress-ng is not installed") }
    for failure in outcome.failures { print("  - \(failure)") }
    print(fatal.isEmpty ? "soak: passed" : "soak: FAILED")
    exit(fatal.isEmpty ? 0 : 1)
} catch {
    print("micmon-soak: \(error)")
    exit(1)
}
