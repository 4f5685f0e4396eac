import Foundation
import Glibc
import Platform
import Testing

/// micmon's screen on a real terminal: `micmon meter` in a private tmux server against a private
/// jackd whose dummy driver has 2, 8 or 32 capture ports, captured with `tmux capture-pane`,
/// then the window resized (`tmux resize-window`) and captured again at the new size.
@Suite(
    "Screen in tmux", .serialized,
    .enabled(if: TestEnvironment.runs(needing: Child.findExecutable("tmux") != nil), "needs tmux (Debian: tmux)"))
struct ScreenIntegrationTests {
    /// The sizes the screen is drawn at, in this order: the window starts at the first.
    static let sizes = [(columns: 200, rows: 50), (columns: 80, rows: 24), (columns: 40, rows: 20)]

    @Test(
        "every channel is on the screen or counted, under one status line, at 200, 80 and 40 columns, redrawn on resize"
    )
    func screenFollowsResize() throws {
        let tmux = try TestEnvironment.executable("tmux", hint: "Debian: tmux")
        let jackProperty = try TestEnvironment.executable("jack_property", hint: "Debian: jackd2")
        // One server for the three sources (2, 8 and 32 of its capture ports): one of jackd's
        // eight server slots. Only other processes are its clients: libjack in this process
        // already serves the shared test server's source, and a client of a second server
        // beside it once crashed inside libjack.
        let server = try ServerProcess(name: "micmon-screen-\(getpid())", captureChannels: 32)
        defer { server.stop() }
        // The first source's pretty name, as a sound card's driver or a patchbay would set it.
        // jack2 keeps metadata in one store per user, by port UUID, and a dummy server's
        // system:capture_1 has the same UUID on every server: another server that stops
        // removes it. So it is set again while the screen is awaited, and removed at the end.
        let prettyName = PrettyName(jackProperty: jackProperty, server: server.name)
        defer { prettyName.remove() }
        for channelCount in [2, 8, 32] {
            try checkScreen(tmux: tmux, server: server, channelCount: channelCount, prettyName: prettyName)
        }
    }

    /// `jackd -S -d dummy` as a child, known to the tests only through other processes
    /// (`jack_wait`, `jack_lsp`, micmon).
    final class ServerProcess {
        let name: String
        private let jackd: ChildProcess
        private let log: String

        init(name: String, captureChannels: Int) throws {
            self.name = name
            log = TestEnvironment.scratchFolder("jackd") + "/jackd.log"
            let path = try TestEnvironment.executable("jackd", hint: "Debian: jackd2")
            jackd = try ChildProcess(
                [
                    path, "-n", name, "-S", "-d", "dummy", "-r", "48000", "-p", "256", "-C", String(captureChannels),
                    "-P", "2",
                ],
                stdout: log, stderr: log)
            let wait = try TestEnvironment.executable("jack_wait", hint: "Debian: jackd2")
            let waiting = try ChildProcess([wait, "-s", name, "-w", "-t", "20"])
            let answered = waiting.wait(timeout: 30) == .init(code: 0, wasKilledBySignal: false)
            if !answered || !jackd.isRunning {
                stop()
                let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw MissingRequirement(description: "jackd -n \(name) did not start: \(said)")
            }
        }

        /// The server's port names (`jack_lsp`).
        func portNames() -> [String] {
            let output = TestEnvironment.scratchFolder("lsp") + "/ports.txt"
            guard let lsp = Child.findExecutable("jack_lsp"),
                let child = try? ChildProcess([lsp, "-s", name], stdout: output)
            else { return [] }
            child.wait(timeout: 30)
            return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
        }

        /// SIGTERM, and the wait for it to end (it gives its registry slot back as it goes).
        func stop() {
            jackd.signal(SIGTERM)
            jackd.wait(timeout: 15)
        }
    }

    /// `jack_property` setting and removing system:capture_1's pretty name, "Mic A".
    struct PrettyName {
        let jackProperty: String
        let server: String
        static let key = "http://jackaudio.org/metadata/pretty-name"

        func set() {
            let child = try? ChildProcess(
                [jackProperty, "--port", "-s", "system:capture_1", Self.key, "Mic A"],
                environment: ["JACK_DEFAULT_SERVER": server])
            child?.wait(timeout: 30)
        }

        func remove() {
            let child = try? ChildProcess(
                [jackProperty, "--port", "-d", "system:capture_1", Self.key],
                environment: ["JACK_DEFAULT_SERVER": server]
            )
            child?.wait(timeout: 30)
        }
    }

    func checkScreen(tmux: String, server: ServerProcess, channelCount: Int, prettyName: PrettyName) throws {
        let folder = TestEnvironment.scratchFolder("screen-\(channelCount)")
        let socket = folder + "/tmux.socket"

        let sources =
            channelCount == 32
            ? "-p 'system:capture_*'" : (1 ... channelCount).map { "-p system:capture_\($0)" }.joined(separator: " ")
        let command =
            "exec env -u COLUMNS -u LINES '\(TestEnvironment.micmonPath)' meter -s '\(server.name)' "
            + "-n screen-\(channelCount) \(sources) --label ,reference --duration 120 2>'\(folder)/stderr.txt'"
        let first = Self.sizes[0]
        try runTmux(
            tmux, socket,
            ["new-session", "-d", "-s", "screen", "-x", String(first.columns), "-y", String(first.rows), command])
        defer {
            // micmon ends on the SIGHUP of its closed pane; the server is stopped only after it
            // has left, so jackd stops at once and gives its slot in the registry back.
            _ = try? runTmux(tmux, socket, ["kill-server"])
            let left = TestEnvironment.waitUntil(timeout: 20) {
                !server.portNames().contains { $0.hasPrefix("screen-\(channelCount):") }
            }
            #expect(left, "micmon did not leave the server after its pane closed")
        }

        for (index, size) in Self.sizes.enumerated() {
            if index > 0 {
                try runTmux(
                    tmux, socket,
                    ["resize-window", "-t", "screen", "-x", String(size.columns), "-y", String(size.rows)])
            }
            var last: [String] = []
            var problem: String? = "nothing captured"
            var polls = 0
            let drawn = TestEnvironment.waitUntil(timeout: 30) {
                if polls % 50 == 0 { prettyName.set() }
                polls += 1
                last = (try? capture(tmux, socket, folder)) ?? []
                problem = Self.problem(with: last, columns: size.columns, rows: size.rows, channels: channelCount)
                return problem == nil
            }
            let stderr = (try? String(contentsOfFile: folder + "/stderr.txt", encoding: .utf8)) ?? ""
            let screen = last.joined(separator: "\n")
            #expect(
                drawn, "\(size.columns)x\(size.rows), \(channelCount) channels: \(problem ?? "")\n\(screen)\n\(stderr)")
        }
    }

    /// What is wrong with a captured screen, or nil: every line within `columns`, at most
    /// `rows − 1` drawn lines, one status line and nothing under it, a scale, the width used,
    /// `--label` and the pretty name shown, and each channel shown once or counted.
    static func problem(with screen: [String], columns: Int, rows: Int, channels: Int) -> String? {
        let lines = screen.map { String($0.reversed().drop { $0 == " " }.reversed()) }
        let drawn = lines.indices.filter { !lines[$0].isEmpty }
        guard let lastDrawn = drawn.last else { return "an empty screen" }
        if let long = lines.first(where: { $0.count > columns }) { return "a line over \(columns) columns: \(long)" }
        if drawn.count > rows - 1 { return "\(drawn.count) lines on \(rows) rows" }
        let statusLines = lines.indices.filter { lines[$0].contains("xruns ") }
        guard statusLines == [lastDrawn] else {
            return "status lines at \(statusLines), the drawing ends at \(lastDrawn)"
        }
        guard lines.contains(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("-60 ") }) else {
            return "no scale"
        }
        guard let widest = lines.map(\.count).max(), widest >= columns * 3 / 4 else {
            return "the drawing does not use the width"
        }
        var names = [["Mic A", "in_1"], ["reference"]] + (2 ..< channels).map { ["in_\($0 + 1)"] }
        names = Array(names.prefix(channels))
        // Channel lines are those with bar cells (loudness lines name channels too).
        let channelLines = lines.filter { $0.contains("·") || $0.contains("█") || $0.contains("▒") }
        var shown = 0
        for alternatives in names {
            let count = alternatives.reduce(0) { sum, name in
                sum + channelLines.reduce(0) { $0 + $1.components(separatedBy: name + " ").count - 1 }
            }
            if count > 1 { return "\(alternatives[0]) shown \(count) times" }
            shown += count
        }
        let hidden =
            lines.filter { !$0.contains("TP") }.compactMap { line -> Int? in
                guard let range = line.range(of: "+"),
                    let end = line.range(of: " more", range: range.upperBound ..< line.endIndex)
                else { return nil }
                return Int(line[range.upperBound ..< end.lowerBound])
            }.first ?? 0
        if shown + hidden != channels { return "\(shown) channels shown and \(hidden) counted of \(channels)" }
        if channels > 1 && !(lines.contains { $0.hasPrefix("Mic A ") } && lines.contains { $0.contains("reference ") })
        {
            return "the pretty name or the label is missing"
        }
        return nil
    }

    @discardableResult
    func runTmux(_ tmux: String, _ socket: String, _ arguments: [String], stdout: String? = nil) throws -> Int32 {
        let child = try ChildProcess([tmux, "-S", socket] + arguments, stdout: stdout)
        let ending = child.wait(timeout: 30)
        if ending != .init(code: 0, wasKilledBySignal: false) {
            throw MissingRequirement(description: "tmux \(arguments.first ?? "") failed: \(ending)")
        }
        return ending.code
    }

    /// The pane as text, one string per row (`capture-pane -p`: no escapes, trailing spaces cut).
    func capture(_ tmux: String, _ socket: String, _ folder: String) throws -> [String] {
        let path = folder + "/pane.txt"
        try runTmux(tmux, socket, ["capture-pane", "-p", "-t", "screen"], stdout: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.components(separatedBy: "\n")
    }
}

/// `--label` in the outputs that are not the screen: the JSON's `label` and the plain line.
@Suite("Labels in JSON and plain lines")
struct LabelOutputTests {
    @Test("--label names in_1 in every JSON meter line and the plain lines; in_2 keeps its port's name")
    func labelInOutputs() throws {
        let server = try SharedTestServer.require()
        let sources = ["-p", server.source.outputPorts[0], "-p", server.source.outputPorts[1]]
        let json = try MicmonProcess.run(
            ["meter", "-s", server.name, "-n", "label-json", "--json", "--duration", "1", "--label", "primary,"]
                + sources)
        #expect(json.exitCode == 0, "\(json.stderr)")
        let meters = json.stdout.split(separator: "\n").filter { $0.hasPrefix("{\"type\":\"meter\"") }
        #expect(!meters.isEmpty)
        for line in meters {
            #expect(line.contains("{\"name\":\"in_1\",") && line.contains("\"connected\":true,\"label\":\"primary\"}"))
            #expect(line.components(separatedBy: "\"label\"").count == 2, "only in_1 has a label: \(line)")
        }
        let plain = try MicmonProcess.run(
            ["meter", "-s", server.name, "-n", "label-plain", "--duration", "1.5", "--label", "primary,"] + sources)
        #expect(plain.exitCode == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("| in_1 (primary) peak "), "\(plain.stdout)")
        #expect(plain.stdout.contains("| in_2 peak "), "\(plain.stdout)")
    }
}
