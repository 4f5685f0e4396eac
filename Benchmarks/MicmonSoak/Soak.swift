import DSP
import Engine
import Foundation
import Glibc
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

    struct Outcome {
        var exitCode: Int32 = -1
        var frames = 0
        var expectedFrames = 0
        var framesDropped: Int?
        var mismatches = 0
        var firstMismatch: Int?
        var rssStartKiB = 0
        var rssEndKiB = 0
        var xruns: Int?
        var stress = "none"
        var failures: [String] = []
    }

    func run() throws -> Outcome {
        var outcome = Outcome()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if getenv("MICMON_SOAK_KEEP") == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let server = try PrivateJackServer(name: "micmon-soak-\(getpid())", sampleRate: 48000, periodFrames: periodFrames)
        defer { server.stop() }
        let source = try DemoSource(serverName: server.name, clientName: "soak-source", signal: .reference)
        defer { source.stop() }

        var stress: Process?
        if let stressNG = PrivateJackServer.findExecutable("stress-ng") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: stressNG)
            process.arguments = ["--hdd", "1", "--hdd-bytes", "256M", "--cpu", "1", "--temp-path", folder,
                                 "--timeout", "\(Int(seconds) + 30)s", "--quiet"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            stress = process
            outcome.stress = "stress-ng --hdd 1 --cpu 1"
        } else {
            outcome.failures.append("stress-ng is not installed (Debian: apt-get install stress-ng): ran without load")
        }
        defer { if let stress, stress.isRunning { stress.terminate(); stress.waitUntilExit() } }

        let take = folder + "/soak.wav"
        let log = folder + "/micmon.out"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: micmon)
        recorder.arguments = ["record", take, "-s", server.name, "-n", "soak-rec", "-p", source.outputPorts[0], "-p", source.outputPorts[1],
                              "--duration", String(seconds), "--json"]
        recorder.standardOutput = FileHandle(forWritingAtPath: log)
        recorder.standardError = FileHandle.standardError
        recorder.standardInput = FileHandle.nullDevice
        try recorder.run()
        let pid = recorder.processIdentifier

        // Memory: first sample after start-up settles, last one just before the end.
        Thread.sleep(forTimeInterval: min(5, seconds / 4))
        outcome.rssStartKiB = Self.residentKiB(pid) ?? 0
        let lastSample = Date().addingTimeInterval(max(0, seconds - min(5, seconds / 4) - 2))
        var rss = outcome.rssStartKiB
        while Date() < lastSample && recorder.isRunning {
            Thread.sleep(forTimeInterval: 1)
            rss = Self.residentKiB(pid) ?? rss
        }
        outcome.rssEndKiB = rss
        recorder.waitUntilExit()
        outcome.exitCode = recorder.terminationStatus

        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let summary = output.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") }.map(String.init) ?? ""
        outcome.framesDropped = Self.integer(after: "\"frames_dropped\":", in: summary)
        outcome.xruns = Self.integer(after: "\"xruns\":", in: summary)
        outcome.expectedFrames = Int(seconds * 48000)
        (outcome.frames, outcome.mismatches, outcome.firstMismatch) = try Self.verify(take)

        if outcome.exitCode != 0 { outcome.failures.append("micmon exited \(outcome.exitCode)") }
        if outcome.framesDropped != 0 { outcome.failures.append("frames dropped: \(outcome.framesDropped.map(String.init) ?? "unknown")") }
        if outcome.frames != outcome.expectedFrames { outcome.failures.append("take has \(outcome.frames) frames, expected \(outcome.expectedFrames)") }
        if outcome.mismatches != 0 {
            outcome.failures.append("\(outcome.mismatches) frames differ from the source (first at \(outcome.firstMismatch ?? -1))")
            let jumps = (try? Self.jumps(take)) ?? []
            outcome.failures.append("the take jumps against the source at (frame, source frames skipped): \(jumps.prefix(10))")
        }
        if outcome.rssEndKiB - outcome.rssStartKiB > allowedGrowthKiB {
            outcome.failures.append("RSS grew by \(outcome.rssEndKiB - outcome.rssStartKiB) KiB (allowed \(allowedGrowthKiB))")
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
                let match = buffer.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[0 ..< 2 * min(count, 64)])) }
                guard let found = match.startFrame else { return (count, count, 0) }
                start = found
            }
            for i in 0 ..< count {
                let n = start! + UInt64(frames + i)
                if buffer[2 * i] != ReferenceSignal.value(channel: 0, frame: n) || buffer[2 * i + 1] != ReferenceSignal.value(channel: 1, frame: n) {
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
    static func jumps(_ path: String) throws -> [(Int, Int64)] {
        let samples = try SoundFileReader(path: path).readAllFloats()
        let frames = samples.count / 2
        var result: [(Int, Int64)] = []
        var position = 0
        var expected: UInt64?
        while position < frames {
            let window = samples.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[2 * position ..< 2 * min(frames, position + 64)])) }
            guard let start = window.startFrame else { position += 1; continue }
            if let expected, expected != start { result.append((position, Int64(start) - Int64(expected))) }
            // Run forward while it matches.
            var i = position
            while i < frames && samples[2 * i] == ReferenceSignal.value(channel: 0, frame: start + UInt64(i - position))
                    && samples[2 * i + 1] == ReferenceSignal.value(channel: 1, frame: start + UInt64(i - position)) { i += 1 }
            expected = start + UInt64(i - position)
            position = i
            if result.count > 20 { break }
        }
        return result
    }
}
