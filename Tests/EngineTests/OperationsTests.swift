// Retention over a pattern's files (only what micmon recorded is deleted, and only while it is
// still that file), the disk guard's verdicts, and the hooks' thread (environment, timeout,
// failure), without a server.

import Foundation
import Platform
import Testing

@testable import Engine

private func scratch(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "micmon-ops-tests-\(getpid())/\(name)-\(UUID().uuidString.prefix(8))"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private func write(_ text: String, to path: String) {
    try? FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
}

private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

@Suite struct RetentionTests {
    @Test func patternRootIsTheFolderBeforeTheFirstField() {
        #expect(Retention.split("take.wav") == (".", "take.wav"))
        #expect(Retention.split("logs/%Y-%m-%d/%H%M%S.flac") == ("logs", "%Y-%m-%d/%H%M%S.flac"))
        #expect(Retention.split("/data/rec/%H.wav") == ("/data/rec", "%H.wav"))
        #expect(Retention.split("/%H.wav") == ("/", "%H.wav"))
        #expect(Retention(pattern: "logs/%Y/%H.wav", policy: .init()).manifestPath == "logs/.micmon-files-%Y_%H.wav")
    }

    @Test("--keep N deletes the oldest files micmon wrote, never a file it did not write")
    func keepCountDeletesOnlyRecordedFiles() {
        let root = scratch("keep")
        let pattern = root + "/%Y/%H%M%S.wav"
        // Files the pattern could have produced, but micmon never recorded: never touched.
        let foreign = [root + "/2026/000000.wav", root + "/2026/notes.txt", root + "/other.wav"]
        for path in foreign { write("not micmon's", to: path) }
        let retention = Retention(pattern: pattern, policy: RetentionPolicy(keepCount: 2))
        let written = (1 ... 5).map { root + "/2026/00000\($0).wav" }
        var removed: [String] = []
        for (index, path) in written.enumerated() {
            write("take \(index)", to: path)
            let outcome = retention.fileWritten(path, now: 1000 + Double(index))
            #expect(outcome.problem == nil)
            removed += outcome.removed
        }
        #expect(removed == Array(written.prefix(3)))
        #expect(written.suffix(2).allSatisfy(exists))
        #expect(foreign.allSatisfy(exists))
        // A later run of the same pattern continues the same record.
        let later = Retention(pattern: pattern, policy: RetentionPolicy(keepCount: 1))
        let next = root + "/2026/000006.wav"
        write("take 6", to: next)
        #expect(later.fileWritten(next, now: 2000).removed == Array(written.suffix(2)))
        #expect(foreign.allSatisfy(exists) && exists(next))
    }

    @Test("a recorded file replaced or changed since is not deleted")
    func changedFilesAreSpared() throws {
        let root = scratch("changed")
        let retention = Retention(pattern: root + "/%H.wav", policy: RetentionPolicy(keepCount: 1))
        let first = root + "/01.wav"
        let second = root + "/02.wav"
        let third = root + "/03.wav"
        write("take", to: first)
        _ = retention.fileWritten(first, now: 1)
        write("take", to: second)
        _ = retention.fileWritten(second, now: 2)
        #expect(!exists(first))
        // Someone replaces 02.wav with a file of their own (a new inode) before it is due.
        try FileManager.default.removeItem(atPath: second)
        write("someone else's", to: second)
        write("take", to: third)
        let outcome = retention.fileWritten(third, now: 3)
        #expect(outcome.removed.isEmpty)
        #expect(outcome.spared.map(\.path) == [second])
        #expect(exists(second) && exists(third))
    }

    @Test func keepForDeletesFilesOlderThanTheSpan() {
        let root = scratch("keepfor")
        let retention = Retention(pattern: root + "/%s.wav", policy: RetentionPolicy(keepForSeconds: 60))
        let old = root + "/1.wav"
        let recent = root + "/2.wav"
        let now = root + "/3.wav"
        write("a", to: old)
        _ = retention.fileWritten(old, now: 1000)
        write("b", to: recent)
        _ = retention.fileWritten(recent, now: 1050)
        write("c", to: now)
        #expect(retention.fileWritten(now, now: 1070).removed == [old])
        #expect(exists(recent) && exists(now))
    }

    @Test("another pattern's manifest under the same name is neither used nor replaced")
    func foreignManifestIsLeftAlone() throws {
        let root = scratch("manifest")
        let retention = Retention(pattern: root + "/take.wav", policy: RetentionPolicy(keepCount: 1))
        write("something else entirely\n", to: retention.manifestPath)
        write("take", to: root + "/take.wav")
        let outcome = retention.fileWritten(root + "/take.wav", now: 1)
        #expect(outcome.problem != nil)
        #expect(try String(contentsOfFile: retention.manifestPath, encoding: .utf8) == "something else entirely\n")
    }

    @Test func pathsWithTabsAndNewlinesSurviveTheManifest() {
        let root = scratch("names")
        let retention = Retention(pattern: root + "/%H.wav", policy: RetentionPolicy(keepCount: 1))
        let odd = root + "/a\tb\nc\\d.wav"
        write("x", to: odd)
        _ = retention.fileWritten(odd, now: 1)
        write("y", to: root + "/next.wav")
        #expect(retention.fileWritten(root + "/next.wav", now: 2).removed == [odd])
    }
}

@Suite struct DiskGuardTests {
    let rate = TakeByteRate(whileRecording: 1000)

    @Test func stopsAtTheFloorAndWarnsOnceAtTenMinutes() {
        let guardian = DiskGuard(folder: "/", minimumFreeBytes: 10_000, rate: rate, bufferSeconds: 5)
        #expect(guardian.floor(secondsWritten: 0) == 15_000)
        func space(_ bytes: UInt64) -> FileSystemSpace { FileSystemSpace(availableBytes: bytes, totalBytes: 1 << 40) }
        #expect(guardian.judge(space(15_000 + 700_000), secondsWritten: 0) == .fine)
        #expect(guardian.lastReading?.secondsLeft == 700)
        #expect(guardian.judge(space(15_000 + 600_000), secondsWritten: 0) == .warn)
        #expect(guardian.judge(space(15_000 + 500_000), secondsWritten: 0) == .fine)  // once
        #expect(guardian.judge(space(15_000 + 700_000), secondsWritten: 0) == .fine)  // re-armed
        #expect(guardian.judge(space(15_000 + 590_000), secondsWritten: 0) == .warn)
        #expect(guardian.judge(space(15_001), secondsWritten: 0) == .fine)
        #expect(guardian.judge(space(15_000), secondsWritten: 0) == .stop)
        #expect(guardian.lastReading?.secondsLeft == 0)
    }

    @Test("a take through the intermediate keeps room for its encoded file")
    func intermediateReservesTheEncodedFile() {
        let flac = TakeByteRate(format: .init(container: .flac, encoding: .pcm24), sampleRate: 48_000, channelCount: 2)
        #expect(flac.whileRecording == 384_000 && flac.atEnd == 288_000)
        let wav = TakeByteRate(format: .init(container: .wav, encoding: .pcm16), sampleRate: 48_000, channelCount: 2)
        #expect(wav.whileRecording == 192_000 && wav.atEnd == 0)
        let guardian = DiskGuard(folder: "/", minimumFreeBytes: 1, rate: flac, bufferSeconds: 0)
        #expect(guardian.floor(secondsWritten: 10) == 1 + 2_880_000)
    }

    @Test func zeroTurnsTheStopOff() {
        let guardian = DiskGuard(folder: "/", minimumFreeBytes: 0, rate: rate)
        #expect(guardian.judge(FileSystemSpace(availableBytes: 0, totalBytes: 1), secondsWritten: 100) != .stop)
    }

    @Test func readsTheRealFileSystem() throws {
        let space = try FileSystem.space(at: NSTemporaryDirectory()).get()
        #expect(space.totalBytes > 0 && space.availableBytes <= space.totalBytes)
        #expect(FileSystem.existingFolder(containing: NSTemporaryDirectory() + "/no/such/folder/take.wav") != "")
    }
}

@Suite struct OperationsThreadTests {
    func job(_ command: String, _ environment: [String: String] = [:]) -> HookJob {
        HookJob(
            hook: "on-event", event: "start", command: command, takeFrame: 480, takeSeconds: 0.01,
            environment: environment)
    }

    func run(_ jobs: [HookJob], timeout: Double = 30) -> [HookResult] {
        let thread = OperationsThread(timeout: timeout)
        #expect(thread.start())
        for job in jobs { thread.submit(.hook(job)) }
        var results: [HookResult] = []
        thread.drain { reports in
            for case .hook(let result) in reports { results.append(result) }
        }
        thread.finish()
        return results
    }

    @Test func aHookGetsItsEnvironmentAndItsResultIsKept() {
        let results = run([
            job("echo \"$MICMON_FILE:$MICMON_FRAMES\"", ["MICMON_FILE": "a b.wav", "MICMON_FRAMES": "9"])
        ])
        #expect(results.count == 1)
        #expect(results.first?.outcome == .exited(0))
        #expect(results.first?.lastLine == "a b.wav:9")
    }

    @Test func aFailingHookIsReportedAndTheNextStillRuns() {
        let results = run([job("echo broken >&2; exit 7"), job("true")])
        #expect(results.map(\.outcome) == [.exited(7), .exited(0)])
        #expect(results.first?.lastLine == "broken")
    }

    @Test("a hook that hangs is killed at the timeout, its children with it")
    func aHangingHookIsKilled() throws {
        let folder = scratch("hang")
        let results = run([job("sleep 600 & echo $! > '\(folder)/child'; wait")], timeout: 0.5)
        #expect(results.map(\.outcome) == [.timedOut])
        let child = try #require(
            Int32(
                try String(contentsOfFile: folder + "/child", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines)))
        // The group was killed: the background sleep is gone (reaped by init, or a zombie for a moment).
        #expect(TestWait.until { kill(child, 0) != 0 || processState(child) == "Z" })
    }

    @Test func floodsBeyondTheQueueAreNotRun() {
        let thread = OperationsThread(timeout: 30, queueLimit: 2)
        // Not started: nothing drains the queue, so the third is refused at once.
        for _ in 0 ..< 3 { thread.submit(.hook(job("true"))) }
        let refused = thread.reports()
        #expect(refused.count == 1)
        if case .hook(let result) = refused.first { #expect(result.outcome == .notRun("too many hooks waiting")) }
    }
}

/// The state letter in /proc/PID/stat ("R", "S", "Z"…), or nil.
private func processState(_ pid: Int32) -> String? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    return text[text.index(close, offsetBy: 2)...].split(separator: " ").first.map(String.init)
}

private enum TestWait {
    /// Polls `condition` every 10 ms for up to 10 s.
    static func until(_ condition: () -> Bool) -> Bool {
        for _ in 0 ..< 1000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
