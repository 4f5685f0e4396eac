import Foundation
import Testing

@testable import micmon

/// A program run to its end, its output read back. Test threads.
private struct ToolRun {
    let code: Int32
    let stdout: String
    let stderr: String

    init(_ arguments: [String], environment: [String: String?] = [:]) throws {
        let folder = TestEnvironment.scratchFolder("tool")
        let child = try ChildProcess(
            arguments, environment: environment, stdout: folder + "/stdout", stderr: folder + "/stderr")
        code = child.wait(timeout: 60).code
        stdout = (try? String(contentsOfFile: folder + "/stdout", encoding: .utf8)) ?? ""
        stderr = (try? String(contentsOfFile: folder + "/stderr", encoding: .utf8)) ?? ""
    }

    /// Whether `tool` is on PATH. Under CI a missing tool fails its test instead of skipping it.
    static func has(_ tool: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }

    static func usable(_ tool: String) -> Bool { has(tool) || TestEnvironment.isCI }
}

/// Writes `text` to a fresh file and returns its path.
private func file(_ text: String, named name: String) throws -> String {
    let path = TestEnvironment.scratchFolder("completion") + "/" + name
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The folder of the built micmon, for a PATH that finds it.
private var micmonFolder: String { URL(fileURLWithPath: TestEnvironment.micmonPath).deletingLastPathComponent().path }

@Suite("Command line: completion scripts and manual")
struct CommandLineCompletionTests {
    /// Runs bash's completion function for `line` (the cursor at its end) and returns COMPREPLY.
    static func bashCompletions(_ script: String, _ lines: [String]) throws -> [[String]] {
        var driver = #"""
            source "$1" || exit 1
            complete -p micmon
            try() { COMP_LINE="$1"; COMP_POINT=${#1}; COMPREPLY=(); _micmon; printf '%s\n' "${COMPREPLY[*]}"; }

            """#
        for line in lines { driver += "try \(CompletionScript.quoted(line))\n" }
        let result = try ToolRun([
            "bash", try file(driver, named: "driver.bash"), try file(script, named: "micmon.bash"),
        ])
        #expect(result.code == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.isEmpty, "stderr: \(result.stderr)")
        var output = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(output.first == "complete -F _micmon micmon")
        output.removeFirst()
        return lines.indices.map { index in
            index < output.count ? output[index].split(separator: " ").map(String.init) : ["(missing)"]
        }
    }

    @Test("bash: the script registers micmon and completes commands, options and values")
    func bash() throws {
        let script = CompletionScript.script(for: .bash)
        var lines = [
            "micmon ", "micmon rec", "micmon meter --js", "micmon record x.wav --format=f",
            "micmon record x.wav --bits ",
            "micmon completions ", "micmon play x.wav --on-route-loss=", "micmon record x.wav --channels ",
        ]
        let commands = CommandTable.visibleCommands
        lines += commands.map { "micmon \($0.name.rawValue) -" }
        let replies = try Self.bashCompletions(script, lines)
        #expect(replies[0] == commands.map(\.name.rawValue) + ["--help", "--version"])
        #expect(replies[1] == ["record"])
        #expect(replies[2] == ["--json"])
        #expect(replies[3] == ["flac"])  // bash has split off "--format="
        #expect(replies[4] == ["16", "24", "32", "float"])
        #expect(replies[5] == ["bash", "zsh", "fish"])
        #expect(replies[6] == ["pause", "stop"])
        #expect(replies[7] == ["raw", "clean", "all"])
        for (index, spec) in commands.enumerated() {
            let names = spec.options.flatMap { [$0.shortName, $0.longName].compactMap { $0 } }
            #expect(replies[8 + index] == names, "\(spec.name.rawValue)")
        }
    }

    @Test("bash: -p and --return complete the server's output ports, -o and --send its input ports")
    func bashPorts() throws {
        let server = try SharedTestServer.require()
        let script = CompletionScript.script(for: .bash)
        let micmon = TestEnvironment.micmonPath
        let replies = try Self.bashCompletions(
            script,
            [
                "\(micmon) meter -s \(server.name) -p ",
                "\(micmon) record x.wav --server=\(server.name) --port=system:",
                "\(micmon) play x.wav -s \(server.name) -o ",
                "\(micmon) latency -s \(server.name) --send system:play",
                "\(micmon) latency -s \(server.name) --return ",
                "\(micmon) meter -s micmon-no-such-server -p ",
            ])
        #expect(replies[0].contains("system:capture_1") && replies[0].contains(server.source.outputPorts[0]))
        #expect(!replies[0].contains("system:playback_1"))
        // After "system:" bash completes what follows the colon.
        #expect(replies[1].contains("capture_1") && !replies[1].contains { $0.contains(":") })
        #expect(replies[2].contains("system:playback_1") && !replies[2].contains("system:capture_1"))
        #expect(replies[3].contains("playback_1"))
        #expect(replies[4].contains("system:capture_1"))
        #expect(replies[5].isEmpty, "no server: no ports, and no error")
    }

    @Test("micmon ports prints the server's ports by direction, and fails without a server")
    func portsHelper() throws {
        let server = try SharedTestServer.require()
        let outputs = try MicmonProcess.run(["ports", "--output", "-s", server.name], timeout: 20)
        #expect(outputs.exitCode == 0)
        let outputNames = outputs.stdout.split(separator: "\n").map(String.init)
        #expect(outputNames.contains("system:capture_1") && outputNames.contains(server.source.outputPorts[0]))
        let inputs = try MicmonProcess.run(["ports", "--input", "--server=\(server.name)"], timeout: 20)
        let inputNames = inputs.stdout.split(separator: "\n").map(String.init)
        #expect(inputNames.contains("system:playback_1") && !inputNames.contains("system:capture_1"))
        let all = try MicmonProcess.run(["ports", "-s", server.name], timeout: 20)
        // Other tests' clients come and go on the shared server between the three listings:
        // compare the ports that stay for the whole run (the server's and the test source's).
        let stays = { (name: String) in name.hasPrefix("system:") || server.source.outputPorts.contains(name) }
        #expect(
            Set(all.stdout.split(separator: "\n").map(String.init)).filter(stays)
                == Set(outputNames + inputNames).filter(stays))
        #expect(Set(outputNames + inputNames).filter(stays).count == 4 + server.source.outputPorts.count)
        let none = try MicmonProcess.run(["ports", "-s", "micmon-no-such-server"], timeout: 20)
        #expect(none.exitCode == 69 && none.stdout.isEmpty)
    }

    @Test("zsh: the script parses and registers _micmon", .enabled(if: ToolRun.usable("zsh")))
    func zsh() throws {
        let script = CompletionScript.script(for: .zsh)
        let path = try file(script, named: "_micmon")
        let syntax = try ToolRun(["zsh", "-n", path])
        #expect(syntax.code == 0 && syntax.stderr.isEmpty, "zsh -n: \(syntax.stderr)")
        let home = TestEnvironment.scratchFolder("zsh-home")
        let loaded = try ToolRun(
            [
                "zsh", "-f", "-c",
                "autoload -U compinit && compinit -u -D && source \(path) && "
                    + "print -r -- $_comps[micmon] && whence -w _micmon _micmon_ports",
            ],
            environment: ["HOME": home, "ZDOTDIR": home])
        #expect(loaded.code == 0, "stderr: \(loaded.stderr)")
        #expect(loaded.stdout == "_micmon\n_micmon: function\n_micmon_ports: function\n", "stdout: \(loaded.stdout)")
        for spec in CommandTable.visibleCommands {
            #expect(script.contains("        \(spec.name.rawValue))\n"))
            for option in spec.options { #expect(script.contains(option.longName), "\(option.longName)") }
        }
    }

    @Test("fish: the script parses and completes commands, values and ports", .enabled(if: ToolRun.usable("fish")))
    func fish() throws {
        let server = try SharedTestServer.require()
        let script = CompletionScript.script(for: .fish)
        let path = try file(script, named: "micmon.fish")
        let syntax = try ToolRun(["fish", "-n", path])
        #expect(syntax.code == 0 && syntax.stderr.isEmpty, "fish -n: \(syntax.stderr)")
        let home = TestEnvironment.scratchFolder("fish-home")
        let searchPath = micmonFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let queries = [
            "micmon rec", "micmon record x.wav --format ", "micmon meter -s \(server.name) -p ",
            "micmon play x.wav -s \(server.name) -o ",
        ]
        let command = "source \(path); " + queries.map { "complete -C '\($0)'; echo ==" }.joined(separator: "; ")
        let result = try ToolRun(
            ["fish", "--no-config", "-c", command],
            environment: ["HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home, "PATH": searchPath])
        #expect(result.code == 0, "stderr: \(result.stderr)")
        let sections = result.stdout.components(separatedBy: "==\n").map { section in
            section.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(sections.count == queries.count + 1, "stdout: \(result.stdout)")
        guard sections.count == queries.count + 1 else { return }
        #expect(sections[0] == ["record"])
        #expect(Set(sections[1]) == ["wav", "w64", "rf64", "caf", "flac", "ogg", "opus", "mp3", "au"])
        #expect(sections[2].contains("system:capture_1") && sections[2].contains(server.source.outputPorts[0]))
        #expect(sections[3].contains("system:playback_1") && !sections[3].contains("system:capture_1"))
    }

    @Test(
        "micmon manual renders with man -l, without warnings, and documents every option",
        .enabled(if: ToolRun.usable("man")))
    func manual() throws {
        let path = try file(ManualPage.page, named: "micmon.1")
        let result = try ToolRun(
            ["man", "--warnings", "-E", "UTF-8", "-l", path],
            environment: ["LC_ALL": "C.UTF-8", "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        #expect(result.code == 0)
        #expect(result.stderr.isEmpty, "man: \(result.stderr)")
        let text = result.stdout
        #expect(text.contains("MICMON(1)"))
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"] {
            #expect(text.contains("\n\(section)\n"), "\(section)")
        }
        for spec in CommandTable.visibleCommands {
            #expect(text.contains("micmon \(spec.name.rawValue)"))
            for option in spec.options {
                #expect(text.contains(option.longName), "\(spec.name.rawValue) \(option.longName)")
            }
        }
        #expect(text.contains("\(DenoiseFigures.delayFrames) frames"))
        #expect(!ManualPage.page.contains("micmon ports"))
    }

    @Test func roffEscaping() {
        #expect(ManualPage.escape(#"a\b -c"#) == #"a\eb \-c"#)
        #expect(ManualPage.escape(".start") == #"\&.start"#)
        #expect(ManualPage.escape("'quote") == #"\&'quote"#)
        #expect(ManualPage.escape("µs — θ") == #"\[u00B5]s \[u2014] \[u03B8]"#)
    }

    @Test("micmon completions SHELL prints the script")
    func completionsCommand() throws {
        for shell in micmon.Shell.allCases {
            let result = try MicmonProcess.run(["completions", shell.rawValue], timeout: 20)
            #expect(result.exitCode == 0 && result.stdout == CompletionScript.script(for: shell))
        }
        let manual = try MicmonProcess.run(["manual"], timeout: 20)
        #expect(manual.exitCode == 0 && manual.stdout == ManualPage.page)
    }
}
