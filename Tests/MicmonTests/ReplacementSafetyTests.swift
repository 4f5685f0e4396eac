import Foundation
import Glibc
import SoundFile
import Testing

/// What `--force` may replace and when: never a take another micmon is still writing, and for
/// `denoise` only once OUT is complete (a failed or killed run leaves OUT as it was).
@Suite("Files: --force replaces only what nobody is writing, and denoise only when complete")
struct DenoiseReplacementTests {
    /// A stereo FLAC of `frames` frames whose second half is cut off: libsndfile announces all
    /// of them (STREAMINFO) and reads about half, so `denoise` ends early (exit 64).
    static func writeDamagedInput(_ path: String, frames: Int) throws {
        let writer = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .flac, encoding: .pcm16), sampleRate: 48_000,
            channelCount: 2)
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0 ..< samples.count { samples[i] = 0.3 * Float(sin(Double(i) * 0.01)) }
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
    }

    /// Issue 23: `denoise --force` replaced OUT when it started, so a damaged IN (exit 64, OUT
    /// discarded) left no OUT at all: the file `--force` was to replace was gone for nothing.
    @Test("denoise --force with a damaged IN: exit 64, the OUT it was to replace unchanged, nothing left behind")
    func damagedInputKeepsTheOldOutput() throws {
        let folder = TestEnvironment.scratchFolder("denoise-damaged")
        let input = folder + "/damaged.flac"
        let output = folder + "/clean.wav"
        try Self.writeDamagedInput(input, frames: 96_000)
        try Data("an older clean take".utf8).write(to: URL(fileURLWithPath: output))
        let before = FileSafety.Snapshot([folder])
        let result = try MicmonProcess.run(["denoise", input, output, "--force"], timeout: 60)
        #expect(result.exitCode == 64, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("damaged"), "stderr: \(result.stderr)")
        #expect(FileSafety.Snapshot([folder]) == before, "the folder changed")
    }

    /// Issue 23: a FLAC written straight to OUT and killed cannot be read (its header never
    /// counts the frames). OUT now appears only complete: a killed run leaves OUT as it was.
    @Test(
        "denoise killed with SIGKILL: OUT is absent, or the file --force was to replace is unchanged",
        arguments: [false, true])
    func killedRunLeavesTheOutputAlone(_ force: Bool) throws {
        let folder = TestEnvironment.scratchFolder("denoise-killed")
        let input = folder + "/long.wav"
        let output = folder + "/clean.flac"
        try FileSafety.writeStereo(input, frames: 48_000 * 60)
        if force { try Data("an older clean take".utf8).write(to: URL(fileURLWithPath: output)) }
        let outputBefore = FileSafety.Snapshot.describe(output)
        let run = try MicmonProcess(["denoise", input, output] + (force ? ["--force"] : []))
        // The run is under way once it has written more than a header, under any name but IN's.
        let started = TestEnvironment.waitUntil(timeout: 60) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.contains { name in
                let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int) ?? 0
                return name != "long.wav" && size > 4096
            }
        }
        run.signal(SIGKILL)
        let result = run.wait(timeout: 30)
        try #require(started, "denoise never started writing; stderr: \(result.stderr)")
        try #require(result.wasKilledBySignal, "denoise ended before it was killed; make the input longer")
        #expect(
            FileSafety.Snapshot.describe(output) == outputBefore, "OUT changed: \(FileSafety.Snapshot.describe(output))"
        )
    }
}

extension JackIntegrationTests {
    @Suite("Files: record --force never replaces a take another micmon is writing")
    struct RecordReplacementTests {
        func recordArguments(_ path: String, _ server: SharedTestServer, name: String, seconds: String) -> [String] {
            [
                "record", path, "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                server.source.outputPorts[1], "--duration", seconds, "--force",
            ]
        }

        /// Issue 23: the second `record --force` renamed its file over the first's while the first
        /// was still recording: both exited 0, and the first take went to a file no name reached.
        @Test("record --force onto a take being recorded: exit 64 naming the other micmon; the first take exact")
        func secondForceIsRefusedWhileTheFirstRecords() throws {
            let server = try SharedTestServer.require()
            let path = TestEnvironment.scratchFolder("force-busy") + "/take.wav"
            try Data("an older take".utf8).write(to: URL(fileURLWithPath: path))
            var original = stat()
            try #require(lstat(path, &original) == 0)
            let first = try MicmonProcess(recordArguments(path, server, name: "force-first", seconds: "1.5"))
            // The first has replaced the old file once FILE is another inode.
            let replaced = TestEnvironment.waitUntil(timeout: 30) {
                var now = stat()
                return lstat(path, &now) == 0 && now.st_ino != original.st_ino
            }
            try #require(replaced, "the first recorder never replaced FILE; stderr: \(first.stderrSoFar)")
            let second = try MicmonProcess.run(
                recordArguments(path, server, name: "force-second", seconds: "0.5"), timeout: 30)
            let firstResult = first.wait(timeout: 30)
            #expect(second.exitCode == 64, "second: \(second.stderr)")
            #expect(second.stderr.contains("another micmon is writing it"), "second: \(second.stderr)")
            #expect(firstResult.exitCode == 0, "first: \(firstResult.stderr)")
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.isExact, "first mismatch at \(outcome.firstMismatch ?? -1)")
            #expect(outcome.frameCount == Int((1.5 * Double(server.sampleRate)).rounded()))
        }

        /// The class: two `record --force` started together onto one existing file, three times:
        /// exactly one records, and FILE is exactly its take.
        @Test("two record --force started together: exactly one succeeds and FILE is exactly its take")
        func twoForcedRecordersOnOneFile() throws {
            let server = try SharedTestServer.require()
            for round in 0 ..< 3 {
                let path = TestEnvironment.scratchFolder("two-forced") + "/take.wav"
                try Data("an older take".utf8).write(to: URL(fileURLWithPath: path))
                let long = try MicmonProcess(
                    recordArguments(path, server, name: "forced-long-\(round)", seconds: "1.5"))
                let short = try MicmonProcess(
                    recordArguments(path, server, name: "forced-short-\(round)", seconds: "1"))
                let longResult = long.wait(timeout: 30)
                let shortResult = short.wait(timeout: 30)
                let codes = [longResult.exitCode, shortResult.exitCode]
                #expect(codes.sorted() == [0, 64], "round \(round): exit codes \(codes)")
                let seconds = longResult.exitCode == 0 ? 1.5 : 1.0
                let outcome = try TakeCheck.verify(path: path)
                #expect(outcome.isExact, "round \(round): first mismatch at \(outcome.firstMismatch ?? -1)")
                #expect(outcome.frameCount == Int((seconds * Double(server.sampleRate)).rounded()))
            }
        }
    }
}
