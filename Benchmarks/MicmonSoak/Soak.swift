import BenchSupport
import DSP
import Engine
import Foundation
import Glibc
import Platform
import SoundFile

/// The soak: `micmon record` of a deterministic source on a private `jackd -S` dummy server at a
/// small period, for a long time, while stress-ng loads the disk and one core. It must drop
/// nothing, match the source sample for sample, and keep its memory flat.
struct Soak {
    var seconds = 600.0
    var periodFrames = 32
    var micmon = ""
    var folder = NSTemporaryDirectory() + "micmon-soak-\(getpid())"
    /// How much the resident set may grow from the first sample to the last.
    var allowedGrowthKiB = 2048
    /// jackd's `-P` (SCHED_FIFO priority), nil for jackd's default (10).
    var jackPriority: Int?
    /// What listens to the source: `micmon record` (the soak proper), or for a control run a bare
    /// client (`jack_meter` on the source's first output) or nothing at all.
    var recorder = Recorder.record
    /// Also run a `Witness` (a bare client on the source beside micmon) and check the take's
    /// jumps against its trace. Default: with `micmon record` only (a control run has none).
    var runsWitness: Bool?

    enum Recorder: String {
        case record, meter, none
    }

    struct Outcome {
        var exitCode: Int32 = -1
        var frames = 0
        var expectedFrames = 0
        var framesDropped: Int?
        /// Frames micmon's timeline rule says the server ran without it (part of `framesDropped`,
        /// silence in the take), and late counter reads that netted out (docs/timeline.md).
        var framesMissed: Int?
        var timelineJitter: Int?
        var mismatches = 0
        var firstMismatch: Int?
        var rssStartKiB = 0
        var rssEndKiB = 0
        var xruns: Int?
        var stress = "none"
        var failures: [String] = []
        /// The source's view of the server: cycles it ran, xruns reported to it, and the jumps of
        /// the server's frame counter between its cycles (cycles the server ran for nobody).
        var sourceCycles = 0
        var sourceXruns = 0
        var sourceGaps = 0
        var sourceGapFrames = 0
        /// jackd's log: late wake-ups of the dummy driver, cycles the engine did not run the
        /// graph for ("Process error"), and clients reported as not finished in time.
        var serverLateWakeups = 0
        var serverSkippedGraphCycles = 0
        var clientsNotFinished: [String: Int] = [:]
        var rssMaxKiB = 0
        /// The witness (with `--witness on`): cycles, and the source periods it was never given
        /// (source frame where each run starts, frames).
        var witnessCycles = 0
        var witnessLost: [(start: UInt64, frames: Int)] = []
        /// Where the take jumps against the source, and whether the witness lost the same
        /// source frames (then the server lost them for every client downstream of the source).
        var jumps: [Jump] = []
        /// The take differs from the source only by periods the witness lost too: the server
        /// ran the source for them but no client downstream of it (machine stalls), not micmon.
        var onlyServerLosses = false
    }

    struct Jump: CustomStringConvertible {
        var takeFrame: Int
        var expectedSourceFrame: UInt64
        /// Source frames skipped (negative: repeated).
        var skipped: Int64
        var witnessLostThemToo: Bool?
        var description: String {
            "take frame \(takeFrame): \(skipped > 0 ? "\(skipped) source frames skipped" : "\(-skipped) source frames repeated")"
                + " from source frame \(expectedSourceFrame)"
                + (witnessLostThemToo.map { $0 ? " (the witness lost them too)" : " (the witness got them)" } ?? "")
        }
    }

    func run() throws -> Outcome {
        var outcome = Outcome()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if getenv("MICMON_SOAK_KEEP") == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let keeps = getenv("MICMON_SOAK_KEEP") != nil
        let server = try PrivateJackServer(
            name: "micmon-soak-\(getpid())", sampleRate: 48000, periodFrames: periodFrames,
            realtimePriority: jackPriority)
        server.keepsLog = true
        defer {
            server.stop()
            let log = (try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? ""
            if keeps { try? log.write(toFile: folder + "/jackd.log", atomically: false, encoding: .utf8) }
            try? FileManager.default.removeItem(atPath: server.logPath)
        }
        // Every cycle of the run, and a margin for start-up and shutdown.
        let traceCapacity = Int((seconds + 60) * 48000) / periodFrames
        let source = try DemoSource(
            serverName: server.name, clientName: "soak-source", signal: .reference, traceCapacity: traceCapacity)
        defer { source.stop() }
        let witness =
            (runsWitness ?? (recorder == .record))
            ? try Witness(serverName: server.name, source: source.outputPorts[0], capacity: traceCapacity) : nil
        defer { witness?.stop() }

        var stress: Process?
        if let stressNG = Child.findExecutable("stress-ng") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: stressNG)
            process.arguments = [
                "--hdd", "1", "--hdd-bytes", "256M", "--cpu", "1", "--temp-path", folder,
                "--timeout", "\(Int(seconds) + 30)s", "--quiet",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            stress = process
            outcome.stress = "stress-ng --hdd 1 --cpu 1"
        } else {
            outcome.failures.append("stress-ng is not installed (Debian: apt-get install stress-ng): ran without load")
        }
        defer {
            if let stress, stress.isRunning {
                stress.terminate()
                stress.waitUntilExit()
            }
        }

        let take = folder + "/soak.wav"
        let log = folder + "/micmon.out"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let recorderProcess = Process()
        switch recorder {
        case .record:
            recorderProcess.executableURL = URL(fileURLWithPath: micmon)
            recorderProcess.arguments = [
                "record", take, "-s", server.name, "-n", "soak-rec", "-p", source.outputPorts[0], "-p",
                source.outputPorts[1],
                "--duration", String(seconds), "--json",
            ]
        case .meter:
            guard let meter = Child.findExecutable("jack_meter") else {
                throw SoakError.missing("jack_meter (Debian: apt-get install jackmeter)")
            }
            recorderProcess.executableURL = URL(fileURLWithPath: meter)
            recorderProcess.arguments = ["-n", "-f", "1", source.outputPorts[0]]
            var environment = ProcessInfo.processInfo.environment
            environment["JACK_DEFAULT_SERVER"] = server.name
            recorderProcess.environment = environment
        case .none:
            // Something to wait for, so the timing is the same as with a recorder.
            recorderProcess.executableURL = URL(fileURLWithPath: "/bin/sleep")
            recorderProcess.arguments = [String(seconds)]
        }
        recorderProcess.standardOutput = FileHandle(forWritingAtPath: log)
        recorderProcess.standardError = FileHandle.standardError
        recorderProcess.standardInput = FileHandle.nullDevice
        try recorderProcess.run()
        let pid = recorderProcess.processIdentifier
        let runStart = Date()

        // Memory: first sample after start-up settles, last one just before the end.
        Thread.sleep(forTimeInterval: min(5, seconds / 4))
        outcome.rssStartKiB = Self.residentKiB(pid) ?? 0
        let lastSample = Date().addingTimeInterval(max(0, seconds - min(5, seconds / 4) - 2))
        var rss = outcome.rssStartKiB
        var rssSamples: [(Double, Int)] = [(Date().timeIntervalSince(runStart), rss)]
        outcome.rssMaxKiB = rss
        while Date() < lastSample && recorderProcess.isRunning {
            Thread.sleep(forTimeInterval: 1)
            rss = Self.residentKiB(pid) ?? rss
            outcome.rssMaxKiB = max(outcome.rssMaxKiB, rss)
            rssSamples.append((Date().timeIntervalSince(runStart), rss))
            if keeps, Int(rssSamples.last!.0) % 60 == 0,
                let maps = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)
            {
                try? maps.write(
                    toFile: folder + "/smaps-\(Int(rssSamples.last!.0)).txt", atomically: false, encoding: .utf8)
            }
        }
        outcome.rssEndKiB = rss
        if keeps {
            let text = rssSamples.map { String(format: "%.1f %d", $0.0, $0.1) }.joined(separator: "\n") + "\n"
            try? text.write(toFile: folder + "/rss.txt", atomically: false, encoding: .utf8)
        }
        if recorder == .meter {
            while Date().timeIntervalSince(runStart) < seconds && recorderProcess.isRunning {
                Thread.sleep(forTimeInterval: 0.2)
            }
            recorderProcess.terminate()
        }
        recorderProcess.waitUntilExit()
        outcome.exitCode = recorderProcess.terminationStatus

        // The source's view, with the server still up (then it stops).
        witness?.stop()
        source.stop()
        let cycles = source.tracedCycles()
        if let witness {
            let traced = witness.cycles()
            outcome.witnessCycles = traced.count
            outcome.witnessLost = Self.framesNotGiven(traced, source: cycles, period: periodFrames)
        }
        if keeps, let witness {
            let data = witness.cycles().withUnsafeBufferPointer { Data(buffer: $0) }
            try? data.write(to: URL(fileURLWithPath: folder + "/witness-cycles.bin"))
        }
        outcome.sourceCycles = source.cyclesRun
        outcome.sourceXruns = source.xruns
        for (previous, next) in zip(cycles, cycles.dropFirst()) {
            let gap = Int(Int32(bitPattern: next.cycleStartFrame &- previous.cycleStartFrame)) - periodFrames
            if gap > 0 {
                outcome.sourceGaps += 1
                outcome.sourceGapFrames += gap
            }
        }
        if keeps {
            let data = cycles.withUnsafeBufferPointer { Data(buffer: $0) }
            try? data.write(to: URL(fileURLWithPath: folder + "/source-cycles.bin"))
        }
        let serverLog = (try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? ""
        for line in serverLog.split(separator: "\n") {
            if line.contains("JackTimedDriver::Process XRun") { outcome.serverLateWakeups += 1 }
            if line.contains("ProcessGraphSync: Process error") { outcome.serverSkippedGraphCycles += 1 }
            if let range = line.range(of: "client = "), line.contains("was not finished") {
                let name = line[range.upperBound...].prefix { $0 != " " }
                outcome.clientsNotFinished[String(name), default: 0] += 1
            }
        }
        if recorder != .record {
            outcome.expectedFrames = 0
            return outcome
        }

        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let summary = output.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") }.map(String.init) ?? ""
        outcome.framesDropped = Self.integer(after: "\"frames_dropped\":", in: summary)
        outcome.framesMissed = Self.integer(after: "\"frames_missed\":", in: summary)
        outcome.timelineJitter = Self.integer(after: "\"timeline_jitter\":", in: summary)
        outcome.xruns = Self.integer(after: "\"xruns\":", in: summary)
        outcome.expectedFrames = Int(seconds * 48000)
        (outcome.frames, outcome.mismatches, outcome.firstMismatch) = try Self.verify(take)

        if outcome.exitCode != 0 { outcome.failures.append("micmon exited \(outcome.exitCode)") }
        if outcome.framesDropped != 0 {
            outcome.failures.append("frames dropped: \(outcome.framesDropped.map(String.init) ?? "unknown")")
        }
        if let missed = outcome.framesMissed, missed > 0 {
            outcome.failures.append("of them missed (the server ran them without micmon): \(missed)")
        }
        if outcome.frames != outcome.expectedFrames {
            outcome.failures.append("take has \(outcome.frames) frames, expected \(outcome.expectedFrames)")
        }
        if outcome.mismatches != 0 {
            outcome.failures.append(
                "\(outcome.mismatches) frames differ from the source (first at \(outcome.firstMismatch ?? -1))")
            outcome.jumps = (try? Self.jumps(take)) ?? []
            if witness != nil {
                for index in outcome.jumps.indices where outcome.jumps[index].skipped > 0 {
                    let jump = outcome.jumps[index]
                    let end = jump.expectedSourceFrame + UInt64(jump.skipped)
                    outcome.jumps[index].witnessLostThemToo = outcome.witnessLost.contains {
                        $0.start <= jump.expectedSourceFrame && $0.start + UInt64($0.frames) >= end
                    }
                }
            }
            outcome.failures.append(
                "the take jumps against the source: "
                    + outcome.jumps.prefix(10).map(\.description).joined(separator: "; "))
        }
        let explained =
            !outcome.jumps.isEmpty && outcome.jumps.count <= 100
            && outcome.jumps.allSatisfy { $0.skipped > 0 && $0.witnessLostThemToo == true }
        outcome.onlyServerLosses =
            explained && outcome.exitCode == 0 && outcome.framesDropped == 0 && outcome.frames == outcome.expectedFrames
        if outcome.rssEndKiB - outcome.rssStartKiB > allowedGrowthKiB {
            outcome.onlyServerLosses = false
            outcome.failures.append(
                "RSS grew by \(outcome.rssEndKiB - outcome.rssStartKiB) KiB (allowed \(allowedGrowthKiB))")
        }
        return outcome
    }

    /// Checks the take against the reference signal in chunks (a 10-minute take is 230 MB).
    static func verify(_ path: String) throws -> (frames: Int, mismatches: Int, first: Int?) {
        let reader = try SoundFileReader(path: path)
        let chunkFrames = 1 << 18
        var buffer = [Float](repeating: 0, count: chunkFrames * 2)
        var start: UInt64?
        var frames = 0
        var mismatches = 0
        var first: Int?
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { reader.read(into: $0) }
            if count == 0 { break }
            if start == nil {
                let match = buffer.withUnsafeBufferPointer {
                    ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[0 ..< 2 * min(count, 64)]))
                }
                guard let found = match.startFrame else { return (count, count, 0) }
                start = found
            }
            for i in 0 ..< count {
                let n = start! + UInt64(frames + i)
                if buffer[2 * i] != ReferenceSignal.value(channel: 0, frame: n)
                    || buffer[2 * i + 1] != ReferenceSignal.value(channel: 1, frame: n)
                {
                    mismatches += 1
                    if first == nil { first = frames + i }
                }
            }
            frames += count
        }
        return (frames, mismatches, first)
    }

    static func residentKiB(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return integer(after: "VmRSS:", in: status)
    }

    static func integer(after key: String, in text: String) -> Int? {
        guard let range = text.range(of: key) else { return nil }
        let digits = text[range.upperBound...].drop { $0 == " " || $0 == "\t" }.prefix { $0.isNumber }
        return Int(digits)
    }
}

extension Soak {
    /// Where a take jumps against the source: (take frame, source frames skipped; negative when
    /// repeated), for diagnosing a mismatch.
    static func jumps(_ path: String) throws -> [Jump] {
        let samples = try SoundFileReader(path: path).readAllFloats()
        let frames = samples.count / 2
        var result: [Jump] = []
        var position = 0
        var expected: UInt64?
        while position < frames {
            let window = samples.withUnsafeBufferPointer {
                ReferenceSignal.match(
                    interleaved: UnsafeBufferPointer(rebasing: $0[2 * position ..< 2 * min(frames, position + 64)]))
            }
            guard let start = window.startFrame else {
                position += 1
                continue
            }
            if let expected, expected != start {
                result.append(
                    Jump(takeFrame: position, expectedSourceFrame: expected, skipped: Int64(start) - Int64(expected)))
            }
            // Run forward while it matches.
            var i = position
            while i < frames && samples[2 * i] == ReferenceSignal.value(channel: 0, frame: start + UInt64(i - position))
                && samples[2 * i + 1] == ReferenceSignal.value(channel: 1, frame: start + UInt64(i - position))
            { i += 1 }
            expected = start + UInt64(i - position)
            position = i
            if result.count > 100 { break }
        }
        return result
    }

    /// The source periods the witness was never given: between two of its cycles, the source
    /// frame at the start of its buffer moved on by more than one period. The ramp gives the
    /// low 16 bits of that frame; the full frame of the first cycle comes from the source's trace
    /// (the source cycle with the same frame counter: source cycle k renders frame k × period),
    /// and the rest is unwrapped step by step.
    static func framesNotGiven(_ cycles: [Witness.Cycle], source: [SourceCycle], period: Int) -> [(
        start: UInt64, frames: Int
    )] {
        guard let first = cycles.first else { return [] }
        let low = UInt64(first.firstSourceFrameLowBits)
        var previous = low
        if let k = source.firstIndex(where: { $0.cycleStartFrame == first.cycleStartFrame }) {
            // The witness read that cycle's period, or one near it.
            for candidate in [k, k - 1, k + 1, k - 2, k + 2]
            where candidate >= 0 && UInt64(candidate * period) & 0xFFFF == low {
                previous = UInt64(candidate * period)
                break
            }
        }
        var lost: [(UInt64, Int)] = []
        for cycle in cycles.dropFirst() {
            // The step in the low 16 bits, taken as a signed 16-bit difference.
            let step = Int64(Int16(truncatingIfNeeded: Int(cycle.firstSourceFrameLowBits) - Int(previous & 0xFFFF)))
            let next = UInt64(Int64(previous) + step)
            if step > Int64(period) { lost.append((previous + UInt64(period), Int(step) - period)) }
            previous = next
        }
        return lost
    }
}

enum SoakError: Error, CustomStringConvertible {
    case missing(String)
    var description: String {
        switch self {
        case .missing(let what): return "not installed: \(what)"
        }
    }
}
