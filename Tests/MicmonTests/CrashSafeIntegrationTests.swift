import Foundation
import Glibc
import SoundFile
import Testing

/// A FLAC take cannot survive a full disk by itself (libsndfile writes its STREAMINFO only at
/// close): micmon records it through FILE.partial.w64, which must then hold the take, be named
/// in the summary and be kept.
extension JackIntegrationTests.FaultIntegrationTests {
    @Test(
        "a full disk mid-FLAC-take: the intermediate is kept, named in the summary and exact; exit 74",
        .enabled(if: TestEnvironment.runs(needing: TestEnvironment.isRoot), "needs root to mount a small tmpfs"))
    func fullDiskKeepsFLACIntermediate() throws {
        try TestEnvironment.require(TestEnvironment.isRoot, "needs root to mount a small tmpfs (CI runs as root)")
        let server = try SharedTestServer.require()
        let mountPoint = TestEnvironment.scratchFolder("fulldisk-flac")
        try #require(Shell.run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint) == 0)
        defer { _ = Shell.run("umount", mountPoint) }
        let path = mountPoint + "/take.flac"
        let partial = path + ".partial.w64"
        let result = try MicmonProcess.run(
            recordArguments(path, server, name: "fulldisk-flac") + ["--duration", "30", "--json", "--min-free", "0"],
            timeout: 40)
        #expect(result.exitCode == 74, "stderr: \(result.stderr)")
        let summary = result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") } ?? ""
        #expect(summary.contains("\"partial\":\"\(partial)\""), "\(summary)")
        let reader = try SoundFileReader(path: partial)
        #expect(reader.container == .w64)
        let outcome = try TakeCheck.verify(path: partial)
        #expect(outcome.frameCount > server.sampleRate, "only \(outcome.frameCount) frames kept")
        #expect(outcome.isExact, "first mismatch at frame \(outcome.firstMismatch ?? -1)")
        #expect(reader.frameCount == Int64(outcome.frameCount), "the header says \(reader.frameCount) frames")
    }

    @Test("an intermediate left by an earlier take is never recorded over, --force or not; FILE is not touched")
    func leftIntermediateIsRefused() throws {
        let server = try SharedTestServer.require()
        let folder = TestEnvironment.scratchFolder("partial-left")
        let path = folder + "/take.flac"
        let partial = path + ".partial.w64"
        let earlier = Data("the only copy of an earlier take".utf8)
        try earlier.write(to: URL(fileURLWithPath: partial))
        for extra in [[], ["--force"]] {
            let result = try MicmonProcess.run(
                recordArguments(path, server, name: "partial-left") + ["--duration", "1"] + extra, timeout: 30)
            #expect(result.exitCode == 74, "stderr: \(result.stderr)")
            #expect(result.stderr.contains(partial), "stderr: \(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: partial)) == earlier)
            #expect(!FileManager.default.fileExists(atPath: path), "FILE was created")
        }
    }
}
