import DSP
import Engine
import Foundation
import Glibc
import Platform
import SoundFile

/// micmon against jack_capture and a bare JACK client, each a child process on the bench's
/// private server recording the bench's `SignalSource`; their rusage comes from wait4.
final class ProcessBench {
    enum Program: String, Codable, CaseIterable {
        case micmon
        case jackCapture = "jack_capture"
        case bare = "jack_meter"
        /// micmon with `--loudness-mode off` (no analysis thread): the scaling section only.
        case micmonOff = "micmon-off"

        /// The record section's programs, in its A B C order.
        static let recordSection: [Program] = [.micmon, .jackCapture, .bare]
        /// Whether this is micmon (with or without the analysis thread).
        var isMicmon: Bool { self == .micmon || self == .micmonOff }
    }

    /// What a run is for: only `comparison` and `scaling` runs are counted. A comparison round
    /// taken again because the host stole time during it keeps its runs as `disturbed`.
    enum Purpose: String, Codable {
        case warmUp = "warm-up"
        case comparison, scaling, disturbed
        /// micmon plain and with `ProcessBench.rotationArguments`, side by side.
        case rotation
        /// The soak section's one long take.
        case soak
    }

    /// What a rotating take adds to `record` (the bench's rotation section).
    static let rotationArguments = ["--pre-roll", "10", "--split", "10s"]

    /// One run of one program.
    struct Run: Codable {
        var program: Program
        var purpose: Purpose
        var round: Int
        var channels: Int
        var seconds: Double
        var commandLine: String
        var end: String?
        var usage: ChildUsage?
        var take: TakeCheck?
        /// micmon: frames its summary says were dropped; jack_capture: its overrun count
        /// ("failed with a total of N overruns"), in periods.
        var dropped: Int?
        /// micmon: frames in the server's timeline gaps (cycles run without it on xruns; not
        /// drops, nothing is written in their place).
        var droppedByServer: Int?
        var xruns: Int?
        /// Percent of the VM's processor time the host stole while the take ran (`HostSteal`).
        var stealPercent: Double?
        var failure: String?
        /// Scaling takes: the server's rate and period, and whose ports were recorded ("source"
        /// or "driver"); nil for the other sections (the bench's 48 kHz / 32-frame server).
        var sampleRate: Int?
        var periodFrames: Int?
        var ports: String?
        /// Recorded with `rotationArguments` (into files named FILE-HHMMSS.wav, checked concatenated).
        var rotating: Bool?

        var succeeded: Bool { failure == nil }
        /// The rusage of a take that lasted its full length (others are not measured).
        var fullUsage: ChildUsage? { usage.flatMap { $0.wallSeconds >= seconds ? $0 : nil } }
    }

    /// A recorded file checked against `ReferenceSignal`.
    struct TakeCheck: Codable {
        var frames: Int
        var expectedFrames: Int
        var isFloat: Bool
        var startFrame: UInt64?
        var mismatchedFrames: Int
        var firstMismatch: Int?
        /// Of the mismatched frames, those that are silence (0, 0): gaps filled by the recorder.
        var silentMismatches: Int
        /// Float, every frame equal to the signal from `startFrame` on, and exactly as long as asked.
        var bitExact: Bool
        /// For a take micmon ended with 75 (losses reported, silence in place): the frames inside
        /// the drops its sidecar lists that are silence on every channel (excused, not counted in
        /// `mismatchedFrames`), and whether every other frame equals the signal. nil otherwise.
        var framesInListedDrops: Int? = nil
        var exactOutsideListedDrops: Bool? = nil
        /// Of the listed drops, those after which the take resumes further back in the signal:
        /// the server skipped the source too (it counts its own cycles, so it fell behind the
        /// server's clock, which the take keeps), and the frames it was behind by in all.
        var dropsTheSourceFellBehindAt = 0
        var framesTheSourceFellBehind = 0
        /// At the first mismatch: how far from the expected source frame the take's frame lies
        /// in the signal (searched within ±4096 frames; nil: nowhere there, or silence), and the
        /// listed drops nearest before and after it.
        var firstMismatchOffset: Int? = nil
        var dropsAroundFirstMismatch: [Range<Int>] = []
        /// Where, beside a listed drop (within `ProcessBench.shiftWindow` frames of it), the take
        /// went on holding the signal shifted from where the check expected it (a period placed
        /// a slot off next to a loss): the take's frame, and the shift in frames. The check
        /// continues from the shifted alignment, so one such place does not count every later
        /// frame as a mismatch.
        var shiftsBesideDrops: [Shift] = []
    }

    /// A place where a take holds the signal `shift` frames from where it was expected.
    struct Shift: Codable {
        var frame: Int
        var shift: Int
    }

    /// How near a listed drop (frames either side) a shifted alignment is counted as a period out
    /// of place beside it rather than as mismatched frames.
    static let shiftWindow = 16384

    let server: BenchServer
    let sourcePorts: [String]
    let micmonPath: String
    let directory: String

    init(server: BenchServer, sourcePorts: [String], micmonPath: String, directory: String) {
        self.server = server
        self.sourcePorts = sourcePorts
        self.micmonPath = micmonPath
        self.directory = directory
    }

    var periodsPerSecond: Double { Double(server.sampleRate) / Double(server.periodFrames) }

    /// The command line of `program` recording `ports` (a file is needed for micmon/jack_capture).
    func arguments(_ program: Program, ports: [String], seconds: Double, file: String) -> [String] {
        switch program {
        case .micmon, .micmonOff:
            // --bits float: 32-bit float WAV, what jack_capture writes by default (like with like).
            return [micmonPath, "record", file, "-s", server.name] + ports.flatMap { ["-p", $0] }
                + ["--duration", format(seconds), "--bits", "float"]
                + (program == .micmonOff ? ["--loudness-mode", "off"] : [])
        case .jackCapture:
            // -d: stop after S seconds (and no stdin); -ns: never read stdin anyway; -dc: no
            // console meter or buffer display (its cheapest way to record); float is its default.
            return ["jack_capture", "-d", format(seconds), "-ns", "-dc"] + ports.flatMap { ["-p", $0] } + [file]
        case .bare:
            // -n: numbers (dB), 8 lines a second to a file; it runs until signalled.
            return ["jack_meter", "-n", ports[0]]
        }
    }

    /// Runs `program` for `seconds` and checks its take. Main thread.
    ///
    /// stdout and stderr go to a file (not a terminal, so micmon prints one plain line a second,
    /// as it would to /dev/null) because the summaries of micmon and jack_capture are read back.
    /// How long past its length a take may run before it is stopped. A long take on a loaded
    /// host may run behind the wall clock (late driver cycles) and take a while to close: a tenth
    /// of its length more, at least 20 s. A soak's server may run slower than real time for
    /// minutes (periods of 167 µs at 192 kHz on a busy host): twice its length more, so that its
    /// take still ends and is checked.
    private func grace(_ seconds: Double, _ purpose: Purpose) -> Double {
        purpose == .soak ? 2 * seconds + 20 : max(20, seconds / 10)
    }

    func run(
        _ program: Program, _ purpose: Purpose, round: Int, seconds: Double, ports: [String]? = nil,
        rotating: Bool = false
    ) -> Run {
        let ports = ports ?? sourcePorts
        let tag = "\(program.rawValue)-\(purpose.rawValue)-\(ports.count)ch-r\(round)" + (rotating ? "-rot" : "")
        let file = "\(directory)/\(tag)" + (rotating ? "-%H%M%S.wav" : ".wav")
        let output = "\(directory)/\(tag).out"
        let argv =
            arguments(program, ports: ports, seconds: seconds, file: file) + (rotating ? Self.rotationArguments : [])
        var run = Run(
            program: program, purpose: purpose, round: round, channels: ports.count, seconds: seconds,
            commandLine: argv.joined(separator: " "))
        if rotating { run.rotating = true }
        // A rotating take's files, in order (named by their second: `tag-HHMMSS.wav`).
        func files() -> [String] {
            guard rotating else { return [file] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { $0.hasPrefix(tag + "-") && $0.hasSuffix(".wav") }.sorted().map {
                directory + "/" + $0
            }
        }
        defer {
            // Each file and its sidecar (FILE.json), so the next take of the same name starts afresh;
            // with MICMON_BENCH_KEEP=DIR they are moved there instead (to look at a failed check).
            let keep = getenv("MICMON_BENCH_KEEP").map { String(cString: $0) }
            for path in files() + [output] {
                for name in path == output ? [path] : [path, path + ".json"] {
                    if let keep, rename(name, keep + "/" + (name as NSString).lastPathComponent) == 0 { continue }
                    unlink(name)
                }
            }
        }
        let stealBefore = HostSteal.now()
        let child: Child
        do {
            // jack_capture and jack_meter have no server option: libjack reads it from the environment.
            child = try Child(argv, stdout: output, stderr: output, environment: ["JACK_DEFAULT_SERVER": server.name])
        } catch {
            run.failure = error.description
            return run
        }

        let ended: (ChildEnd, ChildUsage)
        if program == .bare {
            // It runs until stopped: give it `seconds`, then SIGINT.
            if let early = child.wait(timeout: seconds) {
                ended = early
                run.failure = "\(program.rawValue) ended early (\(early.0.text)): \(lastLines(output))"
            } else {
                ended = child.stop(SIGINT, grace: 5)
                if ended.0 != .signaled(SIGINT) && ended.0 != .exited(0) {
                    run.failure = "\(program.rawValue) did not stop on SIGINT (\(ended.0.text))"
                }
            }
        } else if let done = child.wait(timeout: seconds + grace(seconds, purpose)) {
            ended = done
        } else {
            ended = child.stop(SIGTERM, grace: 30)
            run.failure =
                "\(program.rawValue) did not finish within \(format(seconds + grace(seconds, purpose))) s: "
                + lastLines(output)
        }
        run.end = ended.0.text
        run.usage = ended.1
        if let before = stealBefore { run.stealPercent = HostSteal.now()?.percentSince(before) }

        let text = readText(output)
        var reportedLosses = false
        switch program {
        case .micmon, .micmonOff:
            run.dropped = number(after: "dropped:", in: text)
            // The summary line: "server gaps: 2, 64 frames (the whole graph lost them: …)". Frames
            // the server ran without micmon ("missed:") are in "dropped:".
            run.droppedByServer = number(before: " frames (the whole graph lost them", in: text) ?? 0
            run.xruns = number(after: "xruns:", in: text)
            // Exit 75 is "frames were dropped or missed" by micmon itself: a failure. Graph-wide
            // server gaps leave the exit code alone; the checks below judge the take (one that
            // ended 75 with the silence of its listed drops excused).
            if run.succeeded && ended.0 == .exited(75) {
                reportedLosses = true
            }
            if run.succeeded && ended.0 != .exited(0) {
                run.failure = "micmon ended with \(ended.0.text): \(lastLines(output))"
            } else if run.succeeded && run.dropped == nil {
                run.failure = "micmon printed no summary"
            }
        case .jackCapture:
            run.dropped = number(after: "failed with a total of", in: text) ?? 0
            run.xruns = number(after: "encountered", in: text) ?? 0
            if run.succeeded && ended.0 != .exited(0) {
                run.failure = "jack_capture ended with \(ended.0.text): \(lastLines(output))"
            }
        case .bare:
            break
        }
        if program != .bare && (run.succeeded || reportedLosses) {
            let expected = Int((seconds * Double(server.sampleRate)).rounded())
            do {
                if reportedLosses && !rotating && ports.count != 2 {
                    // Exit 75 (already a failure): is every frame outside the listed drops exact?
                    let drops = Self.listedDrops(sidecar: file + ".json")
                    let take = try checkChannels(file, ports: ports, expectedFrames: expected, excused: drops)
                    run.take = take
                    if take.mismatchedFrames > 0 {
                        run.failure! +=
                            "; outside its \(drops.count) listed drops \(take.mismatchedFrames) of \(take.frames) "
                            + "frames differ from the signal (from frame \(take.firstMismatch ?? 0), which holds "
                            + (take.firstMismatchOffset.map { "the signal \($0) frames from there" }
                                ?? "no nearby signal")
                            + "; drops near it: \(take.dropsAroundFirstMismatch))"
                    }
                    if !take.shiftsBesideDrops.isEmpty {
                        run.failure! +=
                            "; beside its listed drops the signal stood shifted at \(take.shiftsBesideDrops.count) "
                            + "places (frame, shift): "
                            + take.shiftsBesideDrops.prefix(8).map { "(\($0.frame), \($0.shift))" }.joined(
                                separator: ", ")
                    }
                } else if reportedLosses {
                    // A 2-channel or rotating take that ended 75: its failure stands unchecked.
                } else if ports.count != 2 || ports.allSatisfy({ $0.hasPrefix("system:") }) {
                    // Many channels of the source, or the driver's own (silent) capture ports.
                    let take = try checkChannels(file, ports: ports, expectedFrames: expected)
                    run.take = take
                    if !take.bitExact {
                        run.failure =
                            "\(program.rawValue)'s \(ports.count)-channel take is not bit-exact: \(take.frames) of "
                            + "\(expected) frames, \(take.mismatchedFrames) differ from frame \(take.firstMismatch ?? 0)"
                    }
                } else if ports == sourcePorts {
                    let take = try check(files(), expectedFrames: expected)
                    run.take = take
                    if !take.bitExact {
                        run.failure =
                            "\(program.rawValue)'s take is not bit-exact: \(take.frames) of \(expected) frames, "
                            + (take.startFrame == nil
                                ? "no match for its first frames"
                                : "\(take.mismatchedFrames) differ from frame \(take.firstMismatch ?? 0) "
                                    + "(\(take.silentMismatches) of them silence; it reported \(run.dropped ?? 0) dropped, "
                                    + "\(run.droppedByServer ?? 0) in server gaps)")
                    }
                } else {
                    // Silent system ports (scaling): only the shape can be checked.
                    let reader = try SoundFileReader(path: file)
                    if reader.frameCount != expected || reader.channelCount != ports.count {
                        run.failure =
                            "\(program.rawValue) wrote \(reader.frameCount) frames × \(reader.channelCount) channels, "
                            + "not \(expected) × \(ports.count)"
                    }
                }
            } catch {
                run.failure =
                    (run.failure.map { $0 + "; " } ?? "") + "\(program.rawValue)'s file \(file) does not open: \(error)"
            }
        }
        return run
    }

    /// Reads the take (its files, concatenated) and matches it against the reference signal, bit for bit.
    private func check(_ paths: [String], expectedFrames: Int) throws(SoundFileError) -> TakeCheck {
        var samples: [Float] = []
        var isFloat = !paths.isEmpty
        var channelCount = ReferenceSignal.channelCount
        for path in paths {
            let reader = try SoundFileReader(path: path)
            samples += reader.readAllFloats()
            channelCount = reader.channelCount
            isFloat = isFloat && reader.encoding == .float && reader.channelCount == ReferenceSignal.channelCount
        }
        let match = samples.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: $0) }
        let frames = samples.count / max(channelCount, 1)
        var silent = 0
        if isFloat, let start = match.startFrame, match.mismatchedFrames > 0 {
            for i in 0 ..< frames
            where samples[2 * i] == 0 && samples[2 * i + 1] == 0
                && ReferenceSignal.value(channel: 1, frame: start + UInt64(i)) != 0
            {
                silent += 1
            }
        }
        return TakeCheck(
            frames: frames, expectedFrames: expectedFrames, isFloat: isFloat,
            startFrame: match.startFrame, mismatchedFrames: match.mismatchedFrames,
            firstMismatch: match.firstMismatch, silentMismatches: silent,
            bitExact: isFloat && match.startFrame != nil && match.mismatchedFrames == 0 && frames == expectedFrames)
    }

    /// The drops (`kind` "drop": micmon's own losses, silence written in place) a take's sidecar
    /// lists, as ranges of file frames; none when it does not open.
    static func listedDrops(sidecar path: String) -> [Range<Int>] {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let markers = object["markers"] as? [[String: Any]]
        else { return [] }
        return markers.compactMap { marker in
            guard marker["kind"] as? String == "drop", let start = marker["start_frame"] as? Int,
                let length = marker["length"] as? Int, length > 0
            else { return nil }
            return start ..< start + length
        }
    }

    /// Reads an N-channel take and checks it bit for bit: channel k of a take of the source's
    /// ports against `SignalSource.value(channel: k, …)` from the frame the first two channels
    /// match at; a take of the driver's capture ports (the dummy driver's silence) against zeros.
    /// With `excused` (the listed drops of a take that ended 75), a frame inside one that is
    /// silence on every channel is counted in `framesInListedDrops`, not as a mismatch. The take
    /// keeps the server's clock through a drop, and so does the signal, unless the server skipped
    /// the source too (it counts its own cycles): then the frame after the drop is up to the
    /// drop's length further back in the signal, which is found by trying each shift on that
    /// frame (every channel alike) and counted apart. Read in blocks of 65536 frames, so a take
    /// of any length fits in memory.
    private func checkChannels(
        _ path: String, ports: [String], expectedFrames: Int, excused: [Range<Int>]? = nil
    ) throws(SoundFileError) -> TakeCheck {
        let reader = try SoundFileReader(path: path)
        let channels = reader.channelCount
        let isFloat = reader.encoding == .float && channels == ports.count
        let silent = ports.allSatisfy { $0.hasPrefix("system:") }
        let blockFrames = 65536
        var block = [Float](repeating: 0, count: blockFrames * max(channels, 1))
        var start: UInt64?
        var frames = 0
        var mismatched = 0
        var inDrops = 0
        var first: Int?
        let drops = (excused ?? []).sorted { $0.lowerBound < $1.lowerBound }
        var nextDrop = 0
        /// Whether file frame `frame` (asked in increasing order) lies in a listed drop.
        func isInADrop(_ frame: Int) -> Bool {
            while nextDrop < drops.count && drops[nextDrop].upperBound <= frame { nextDrop += 1 }
            return nextDrop < drops.count && drops[nextDrop].contains(frame)
        }
        /// How far behind the server's clock the source has fallen at listed drops, and the
        /// length of the drop just left (0: none).
        var sourceBehind: UInt64 = 0
        var droppedJustNow = 0
        var fellBehindAt = 0
        var firstOffset: Int?
        var around: [Range<Int>] = []
        var shifts: [Shift] = []
        /// Whether file frame `frame` lies within `shiftWindow` frames of a listed drop.
        func isBesideADrop(_ frame: Int) -> Bool {
            let window = Self.shiftWindow
            let lower = nextDrop > 0 ? nextDrop - 1 : 0
            return drops[lower...].prefix(2).contains {
                frame >= $0.lowerBound - window && frame < $0.upperBound + window
            }
        }
        /// The shift within ±4096 frames at which frame i of the block holds the signal, expected
        /// at `expected`; nil: nowhere there.
        func shift(_ i: Int, expected: Int64, holds: (Int, UInt64) -> Bool) -> Int? {
            (-4096 ... 4096).first { offset in
                offset != 0 && expected + Int64(offset) >= 0 && holds(i, UInt64(expected + Int64(offset)))
            }
        }
        while isFloat {
            let count = block.withUnsafeMutableBufferPointer { reader.read(into: $0) }
            if count == 0 { break }
            if start == nil {
                if silent {
                    start = 0
                } else if channels >= 2 {
                    var pair = [Float](repeating: 0, count: count * 2)
                    for i in 0 ..< count {
                        pair[2 * i] = block[i * channels]
                        pair[2 * i + 1] = block[i * channels + 1]
                    }
                    start = pair.withUnsafeBufferPointer { ReferenceSignal.match(interleaved: $0) }.startFrame
                }
                guard start != nil else { break }
            }
            let origin = start! &+ UInt64(frames)
            /// Whether frame i of the block is source frame `source` on every channel.
            func holds(_ i: Int, source: UInt64) -> Bool {
                (0 ..< channels).allSatisfy { k in
                    let expected = silent ? 0 : SignalSource.value(channel: k, frame: source)
                    return block[i * channels + k].bitPattern == expected.bitPattern
                }
            }
            for i in 0 ..< count {
                let inADrop = excused != nil && isInADrop(frames + i)
                if inADrop {
                    droppedJustNow = drops[nextDrop].count
                } else if droppedJustNow > 0 {
                    // The first frame after a drop: where the source was skipped too, it is
                    // further back in the signal, by no more than the drop.
                    let position = origin &+ UInt64(i) &- sourceBehind
                    if !silent && !holds(i, source: position) {
                        let back = (1 ... droppedJustNow).first { back in
                            UInt64(back) <= position && holds(i, source: position &- UInt64(back))
                        }
                        if let back {
                            sourceBehind &+= UInt64(back)
                            fellBehindAt += 1
                        }
                    }
                    droppedJustNow = 0
                }
                let same = holds(i, source: origin &+ UInt64(i) &- sourceBehind)
                let isSilent = (0 ..< channels).allSatisfy({ block[i * channels + $0].bitPattern == 0 })
                if !same && inADrop && isSilent {
                    inDrops += 1
                } else if !same && !silent && !isSilent && excused != nil && isBesideADrop(frames + i),
                    let offset = shift(
                        i, expected: Int64(origin &+ UInt64(i) &- sourceBehind), holds: { holds($0, source: $1) })
                {
                    // A period out of place next to a loss: go on from the signal where it is.
                    shifts.append(Shift(frame: frames + i, shift: offset))
                    sourceBehind &-= UInt64(bitPattern: Int64(offset))
                } else if !same {
                    mismatched += 1
                    if first == nil {
                        first = frames + i
                        let expected = Int64(origin &+ UInt64(i) &- sourceBehind)
                        firstOffset = shift(i, expected: expected, holds: { holds($0, source: $1) })
                        let f = frames + i
                        around =
                            Array(drops.filter { $0.upperBound <= f }.suffix(2))
                            + Array(drops.filter { $0.lowerBound > f }.prefix(1))
                    }
                }
            }
            frames += count
        }
        if start == nil { frames = Int(reader.frameCount) }
        let exact = isFloat && start != nil && mismatched == 0 && shifts.isEmpty && frames == expectedFrames
        return TakeCheck(
            frames: frames, expectedFrames: expectedFrames, isFloat: isFloat, startFrame: start,
            mismatchedFrames: start == nil ? frames : mismatched, firstMismatch: first, silentMismatches: 0,
            bitExact: exact && inDrops == 0, framesInListedDrops: excused == nil ? nil : inDrops,
            exactOutsideListedDrops: excused == nil ? nil : exact, dropsTheSourceFellBehindAt: fellBehindAt,
            framesTheSourceFellBehind: Int(sourceBehind), firstMismatchOffset: firstOffset,
            dropsAroundFirstMismatch: around, shiftsBesideDrops: shifts)
    }

    /// The integer after the last occurrence of `label` in `text`.
    private func number(after label: String, in text: String) -> Int? {
        guard let range = text.ranges(of: label).last else { return nil }
        let digits = text[range.upperBound...].drop(while: { $0 == " " }).prefix(while: \.isNumber)
        return Int(digits)
    }

    /// The integer just before the last occurrence of `label` in `text`.
    private func number(before label: String, in text: String) -> Int? {
        guard let range = text.ranges(of: label).last else { return nil }
        return Int(String(text[..<range.lowerBound].reversed().prefix(while: \.isNumber).reversed()))
    }

    private func lastLines(_ path: String) -> String {
        readText(path).split(separator: "\n").suffix(3).joined(separator: " / ")
    }
}

/// Seconds without a trailing ".0" (30, 10, 2.5).
func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}
