import Foundation
import Glibc
import SoundFile
import Testing

/// What micmon may do to the path it writes (FILE of `record`, OUT of `denoise`): create a new
/// regular file there, or, with `--force`, replace a regular file or a symbolic link (the link
/// itself) with a new regular file; anything else is exit 64 with nothing touched.
enum FileSafety {
    /// What is at each path in a folder: kind, link destination, bytes. Compared before and
    /// after a run to see that nothing but FILE changed.
    struct Snapshot: Equatable, CustomStringConvertible {
        var entries: [String: String] = [:]

        /// What is in `folders`, but `excluded` and `alsoExcluded` (a take's sidecar, FILE.json).
        init(_ folders: [String], excluding excluded: String? = nil, alsoExcluding alsoExcluded: String? = nil) {
            for folder in folders {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                    let path = folder + "/" + name
                    if path == excluded || path == alsoExcluded { continue }
                    entries[path] = Self.describe(path)
                }
            }
        }

        static func describe(_ path: String) -> String {
            var info = stat()
            guard lstat(path, &info) == 0 else { return "absent" }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                return "link → " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
            case S_IFREG:
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
                let digest = bytes.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
                return "file \(info.st_ino) \(bytes.count) bytes \(digest)"
            case S_IFDIR: return "directory"
            case S_IFIFO: return "fifo"
            case S_IFCHR: return "character device \(info.st_rdev)"
            default: return "other"
            }
        }

        var description: String {
            entries.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        }
    }

    /// Whether `path` itself (not what it may point at) is a regular file.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// A stereo float file of `frames` frames at 48 kHz (a tone and noise), for `denoise`.
    static func writeStereo(_ path: String, frames: Int = 9600) throws {
        let writer = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 48_000,
            channelCount: 2)
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0 ..< frames {
            let tone = 0.3 * Float(sin(2 * Double.pi * 440 * Double(i) / 48_000))
            samples[2 * i] = tone
            samples[2 * i + 1] = 0.5 * tone
        }
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
    }

    /// What is at FILE before the run.
    enum Existing: String, CaseIterable, CustomStringConvertible, Sendable {
        case nothing, regularFile, symlinkToFile, symlinkToDirectory, danglingSymlink, fifo, symlinkToDevice
        case deviceNode, directory, hardLinkToInput, symlinkToInput

        var description: String { rawValue }
        /// Only `denoise` has an input file.
        var needsInput: Bool { self == .hardLinkToInput || self == .symlinkToInput }

        /// Whether micmon should write FILE (true) or refuse with 64 (false).
        func isWritten(force: Bool) -> Bool {
            switch self {
            case .nothing: return true
            case .regularFile, .symlinkToFile, .danglingSymlink: return force
            case .symlinkToDirectory, .fifo, .symlinkToDevice, .deviceNode, .directory, .hardLinkToInput,
                .symlinkToInput:
                return false
            }
        }
    }

    /// A scratch folder with `input.wav` (for denoise) and FILE (`out.wav`) prepared as
    /// `existing`; `elsewhere` holds what links point at. Returns nil when the machine cannot
    /// make it (a device node needs root).
    static func prepare(_ existing: Existing) throws -> (
        folder: String, elsewhere: String, file: String, input: String
    )? {
        let folder = TestEnvironment.scratchFolder("file-safety-\(existing)")
        let elsewhere = TestEnvironment.scratchFolder("file-safety-elsewhere")
        let file = folder + "/out.wav"
        let input = folder + "/input.wav"
        try writeStereo(input)
        try Data("someone else's file".utf8).write(to: URL(fileURLWithPath: elsewhere + "/victim.txt"))
        let manager = FileManager.default
        switch existing {
        case .nothing: break
        case .regularFile: try Data("an older take".utf8).write(to: URL(fileURLWithPath: file))
        case .symlinkToFile:
            try manager.createSymbolicLink(atPath: file, withDestinationPath: elsewhere + "/victim.txt")
        case .symlinkToDirectory: try manager.createSymbolicLink(atPath: file, withDestinationPath: elsewhere)
        case .danglingSymlink:
            try manager.createSymbolicLink(atPath: file, withDestinationPath: elsewhere + "/missing.wav")
        case .fifo: try #require(mkfifo(file, 0o644) == 0)
        case .symlinkToDevice: try manager.createSymbolicLink(atPath: file, withDestinationPath: "/dev/null")
        case .deviceNode:
            // The same device as /dev/null (1, 3).
            guard mknod(file, S_IFCHR | 0o666, 0x103) == 0 else { return nil }
        case .directory: try manager.createDirectory(atPath: file, withIntermediateDirectories: false)
        case .hardLinkToInput: try #require(link(input, file) == 0)
        case .symlinkToInput: try manager.createSymbolicLink(atPath: file, withDestinationPath: "input.wav")
        }
        return (folder, elsewhere, file, input)
    }

    /// Runs `arguments` (FILE already in them) and checks the class's promise: FILE written
    /// (exit 0 and `written` says the content is right) or exit 64, nothing else touched, no hang.
    static func check(
        _ existing: Existing, force: Bool, folder: String, elsewhere: String, file: String,
        arguments: [String], environment: [String: String] = [:], written: (String) throws -> Void
    ) throws {
        let fileBefore = Snapshot.describe(file)
        let before = Snapshot([folder, elsewhere], excluding: file)
        let devNull = Snapshot.describe("/dev/null")
        let result = try MicmonProcess.run(
            arguments + (force ? ["--force"] : []), environment: environment, timeout: 30)
        #expect(!result.wasKilledBySignal, "\(existing) force \(force): hung or crashed; stderr: \(result.stderr)")
        // A take that was written has its sidecar beside it (a new regular file), and nothing else.
        let wrote = arguments.first == "record" && existing.isWritten(force: force) && result.exitCode == 0
        let after = Snapshot([folder, elsewhere], excluding: file, alsoExcluding: wrote ? file + ".json" : nil)
        #expect(after == before, "\(existing) force \(force): something else changed:\n\(before)\n---\n\(after)")
        if wrote { #expect(isRegularFile(file + ".json"), "\(existing) force \(force): no sidecar") }
        #expect(Snapshot.describe("/dev/null") == devNull)
        if existing.isWritten(force: force) {
            #expect(result.exitCode == 0, "\(existing) force \(force): stderr: \(result.stderr)")
            #expect(isRegularFile(file), "\(existing) force \(force): FILE is \(Snapshot.describe(file))")
            if result.exitCode == 0 { try written(file) }
        } else {
            #expect(result.exitCode == 64, "\(existing) force \(force): stderr: \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
            #expect(Snapshot.describe(file) == fileBefore, "\(existing) force \(force): FILE changed")
        }
    }
}

@Suite("Files: denoise never destroys or writes through what is at OUT")
struct DenoiseFileSafetyTests {
    /// Issue 23 defect 1: `denoise t.wav t.wav --force` truncated t.wav, failed to read it,
    /// and unlinked it.
    @Test(
        "denoise IN IN --force, through the same path, ./, a symlink or a hard link: exit 64, IN unchanged",
        arguments: ["same path", "./", "symlink", "hard link"])
    func outputIsTheInput(_ spelling: String) throws {
        let folder = TestEnvironment.scratchFolder("denoise-in-in")
        let input = folder + "/t.wav"
        try FileSafety.writeStereo(input)
        let output: String
        switch spelling {
        case "same path": output = input
        case "./": output = folder + "/./t.wav"
        case "symlink":
            output = folder + "/link.wav"
            try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: "t.wav")
        default:
            output = folder + "/hard.wav"
            try #require(link(input, output) == 0)
        }
        let before = FileSafety.Snapshot([folder])
        let inputBytes = try Data(contentsOf: URL(fileURLWithPath: input))
        let result = try MicmonProcess.run(["denoise", input, output, "--force"], timeout: 30)
        #expect(result.exitCode == 64, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("same file"), "stderr: \(result.stderr)")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: input))) == inputBytes)
        #expect(FileSafety.Snapshot([folder]) == before)
    }

    /// Issue 23 defect 3, offline: `--force` opened OUT through a symlink and wrote into the
    /// file it pointed at.
    @Test("denoise --force over a planted symlink replaces the link; the file it pointed at is unchanged")
    func forceReplacesTheLinkNotItsTarget() throws {
        let prepared = try #require(try FileSafety.prepare(.symlinkToFile))
        let result = try MicmonProcess.run(["denoise", prepared.input, prepared.file, "--force"], timeout: 30)
        #expect(result.exitCode == 0, "stderr: \(result.stderr)")
        let victim = try String(contentsOfFile: prepared.elsewhere + "/victim.txt", encoding: .utf8)
        #expect(victim == "someone else's file")
        #expect(FileSafety.isRegularFile(prepared.file))
        #expect(try SoundFileReader(path: prepared.file).frameCount == 9600)
    }

    static let cells: [(FileSafety.Existing, Bool)] = FileSafety.Existing.allCases.flatMap {
        [($0, false), ($0, true)]
    }

    /// The class, offline: every kind of thing at OUT, with and without `--force`.
    @Test("property: OUT is a new or replaced regular file, or exit 64 with nothing touched", arguments: cells)
    func property(_ existing: FileSafety.Existing, _ force: Bool) throws {
        guard let prepared = try FileSafety.prepare(existing) else {
            try TestEnvironment.require(!TestEnvironment.isCI, "cannot make \(existing) here")
            return
        }
        try FileSafety.check(
            existing, force: force, folder: prepared.folder, elsewhere: prepared.elsewhere, file: prepared.file,
            arguments: ["denoise", prepared.input, prepared.file]
        ) { file in
            let reader = try SoundFileReader(path: file)
            #expect(reader.channelCount == 1)
            #expect(reader.frameCount == 9600)
        }
    }
}

extension JackIntegrationTests {
    @Suite("Files: record never splices, destroys or writes through what is at FILE")
    struct RecordFileSafetyTests {
        func recordArguments(_ path: String, _ server: SharedTestServer, name: String, seconds: String) -> [String] {
            [
                "record", path, "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                server.source.outputPorts[1], "--duration", seconds,
            ]
        }

        /// Issue 23 defect 2: the file was created exclusively, unlinked, and reopened with
        /// truncation, so two recorders both exited 0 and the file was a splice of both takes.
        @Test("two records to one new file: exactly one succeeds and the file is exactly its take")
        func twoRecordersOnOneFile() throws {
            let server = try SharedTestServer.require()
            for round in 0 ..< 3 {
                let path = TestEnvironment.scratchFolder("two-recorders") + "/take.wav"
                let long = try MicmonProcess(recordArguments(path, server, name: "race-long-\(round)", seconds: "1.5"))
                let short = try MicmonProcess(recordArguments(path, server, name: "race-short-\(round)", seconds: "1"))
                let longResult = long.wait(timeout: 30)
                let shortResult = short.wait(timeout: 30)
                let codes = [longResult.exitCode, shortResult.exitCode]
                #expect(codes.sorted() == [0, 64], "round \(round): exit codes \(codes)")
                let loser = longResult.exitCode == 0 ? shortResult : longResult
                #expect(loser.stderr.contains("exists"), "round \(round): loser said: \(loser.stderr)")
                let seconds = longResult.exitCode == 0 ? 1.5 : 1.0
                let outcome = try TakeCheck.verify(path: path)
                #expect(outcome.isExact, "round \(round): first mismatch at \(outcome.firstMismatch ?? -1)")
                #expect(outcome.frameCount == Int((seconds * Double(server.sampleRate)).rounded()))
            }
        }

        /// Issue 23 defect 3: `--force` followed a symlink another user planted and wrote into
        /// the file it pointed at.
        @Test("record --force over a planted symlink replaces the link; the file it pointed at is unchanged")
        func forceReplacesTheLinkNotItsTarget() throws {
            let server = try SharedTestServer.require()
            let prepared = try #require(try FileSafety.prepare(.symlinkToFile))
            let result = try MicmonProcess.run(
                recordArguments(prepared.file, server, name: "planted-link", seconds: "0.5") + ["--force"],
                timeout: 30)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let victim = try String(contentsOfFile: prepared.elsewhere + "/victim.txt", encoding: .utf8)
            #expect(victim == "someone else's file")
            #expect(FileSafety.isRegularFile(prepared.file))
            let outcome = try TakeCheck.verify(path: prepared.file)
            #expect(outcome.isExact && outcome.frameCount == server.sampleRate / 2)
        }

        static let cells: [(FileSafety.Existing, Bool)] = FileSafety.Existing.allCases.filter { !$0.needsInput }
            .flatMap { [($0, false), ($0, true)] }

        /// The class, live: every kind of thing at FILE, with and without `--force`.
        @Test(
            "property: FILE is a new or replaced regular file holding the exact take, or exit 64 with nothing touched",
            arguments: cells)
        func property(_ existing: FileSafety.Existing, _ force: Bool) throws {
            let server = try SharedTestServer.require()
            guard let prepared = try FileSafety.prepare(existing) else {
                try TestEnvironment.require(!TestEnvironment.isCI, "cannot make \(existing) here")
                return
            }
            try FileSafety.check(
                existing, force: force, folder: prepared.folder, elsewhere: prepared.elsewhere, file: prepared.file,
                arguments: recordArguments(prepared.file, server, name: "property", seconds: "0.25")
            ) { file in
                let outcome = try TakeCheck.verify(path: file)
                #expect(outcome.isExact, "first mismatch at \(outcome.firstMismatch ?? -1)")
                #expect(outcome.frameCount == server.sampleRate / 4)
            }
        }
    }
}
