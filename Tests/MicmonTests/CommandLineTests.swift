import Foundation
import Testing

/// Bad input: one line on stderr, exit 64, nothing created, and no JACK server needed.
@Suite("Command line")
struct CommandLineTests {
    struct BadInput: CustomStringConvertible, Sendable {
        let name: String
        let arguments: [String]
        /// Words the message must contain.
        let message: String
        var description: String { name }
    }

    static let badInputs: [BadInput] = [
        BadInput(name: "unknown option", arguments: ["meter", "--bogus"], message: "unknown option '--bogus'"),
        BadInput(name: "unknown command", arguments: ["recrod", "x.wav"], message: "unknown command 'recrod'"),
        BadInput(name: "missing duration", arguments: ["meter", "--duration"], message: "--duration needs a value"),
        BadInput(name: "zero duration", arguments: ["meter", "--duration", "0"], message: "greater than 0"),
        BadInput(name: "negative duration", arguments: ["meter", "--duration", "-2"], message: "greater than 0"),
        BadInput(name: "non-numeric duration", arguments: ["meter", "--duration", "ten"], message: "number of seconds"),
        BadInput(name: "record without a file", arguments: ["record"], message: "needs a FILE"),
        BadInput(name: "flac cannot hold float", arguments: ["record", "SCRATCH/take.flac", "--bits", "float"], message: "flac cannot hold float"),
        BadInput(name: "unknown format", arguments: ["record", "SCRATCH/take.wav", "--format", "mp3"], message: "unknown --format 'mp3'"),
        BadInput(name: "unknown bits", arguments: ["record", "SCRATCH/take.wav", "--bits", "12"], message: "unknown --bits '12'"),
        BadInput(name: "missing folder", arguments: ["record", "SCRATCH/no/such/folder/take.wav"], message: "does not exist"),
        BadInput(name: "unwritable path", arguments: ["record", "/proc/micmon-take.wav"], message: "cannot write /proc/micmon-take.wav"),
        BadInput(name: "a directory as FILE", arguments: ["record", "SCRATCH"], message: "is a directory"),
        BadInput(name: "existing file without --force", arguments: ["record", "SCRATCH/existing.wav"], message: "exists; use --force"),
        BadInput(name: "format options without a file", arguments: ["meter", "--bits", "16"], message: "only when recording"),
        BadInput(name: "latency: zero duration", arguments: ["latency", "--software-loop", "--duration", "0"], message: "greater than 0"),
        BadInput(name: "latency: negative duration", arguments: ["latency", "--duration", "-3"], message: "greater than 0"),
        BadInput(name: "latency: --return with --software-loop", arguments: ["latency", "--return", "system:capture_1", "--software-loop"],
                 message: "--return and --software-loop both feed in_1"),
        BadInput(name: "latency: --send without a port", arguments: ["latency", "--send"], message: "--send needs a value"),
        BadInput(name: "latency: -p", arguments: ["latency", "-p", "system:capture_1"], message: "-p does not apply to micmon latency"),
        BadInput(name: "latency: loop options on another command", arguments: ["meter", "--software-loop"], message: "unknown option '--software-loop'"),
    ]

    @Test("bad input exits 64 with a one-line reason and creates nothing", arguments: badInputs)
    func badInputIsRefused(_ input: BadInput) throws {
        let scratch = TestEnvironment.scratchFolder("cli")
        let existing = scratch + "/existing.wav"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch).sorted()
        // No server under this name: if micmon got as far as JACK, the exit code would be 69.
        var arguments = input.arguments.map { $0.replacingOccurrences(of: "SCRATCH", with: scratch) }
        arguments.insert(contentsOf: ["-s", "micmon-no-such-server"], at: min(1, arguments.count))
        let result = try MicmonProcess.run(arguments, timeout: 20)
        #expect(result.exitCode == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("micmon: "))
        #expect(result.stderr.contains(input.message), "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == before)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: "/proc/micmon-take.wav"))
    }

    @Test("no JACK server: a clear message pointing to micmon demo, exit 69, nothing created")
    func noServer() throws {
        let scratch = TestEnvironment.scratchFolder("noserver")
        let result = try MicmonProcess.run(["record", scratch + "/take.wav", "-s", "micmon-no-such-server"], timeout: 30)
        #expect(result.exitCode == 69)
        #expect(result.stderr.contains("cannot connect to the JACK server 'micmon-no-such-server'"))
        #expect(result.stderr.contains("micmon demo"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    @Test("an unknown port lists the available output ports and exits 64")
    func unknownPort() throws {
        let server = try SharedTestServer.require()
        let result = try MicmonProcess.run(["meter", "-s", server.name, "-p", "nosuch:port_*", "--duration", "1"], timeout: 30)
        #expect(result.exitCode == 64)
        #expect(result.stderr.contains("no JACK output port matches 'nosuch:port_*'"))
        #expect(result.stderr.contains(server.source.outputPorts[0]))
    }

    @Test("--help matches its snapshot, and every command has help")
    func helpSnapshot() throws {
        let result = try MicmonProcess.run(["--help"], timeout: 10)
        #expect(result.exitCode == 0)
        let snapshotPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots/help.txt")
        let snapshot = try String(contentsOf: snapshotPath, encoding: .utf8)
        #expect(result.stdout == snapshot)
        for command in ["meter", "record", "demo", "latency"] {
            let help = try MicmonProcess.run([command, "--help"], timeout: 10)
            #expect(help.exitCode == 0)
            #expect(help.stdout.contains("micmon \(command)"))
            #expect(help.stdout.contains("Exit codes:"))
        }
        let version = try MicmonProcess.run(["--version"], timeout: 10)
        #expect(version.stdout.hasPrefix("micmon "))
    }
}
