import DSP
import Engine
import Foundation
import SoundFile
import Testing

@testable import micmon

/// Parses `arguments` (after the program name), or returns the usage error.
private func parsed(_ arguments: [String]) -> Result<Command, UsageError> {
    Result { () throws(UsageError) in try Command.parse(arguments) }
}

/// The positionals a command needs before its options can be tried.
private func required(_ name: CommandName) -> [String] {
    switch name {
    // record's FILE holds a time field, so that --split is accepted too.
    case .record: return ["take-%H%M%S.wav"]
    case .play: return ["take.wav"]
    case .denoise: return ["in.wav", "out.wav"]
    case .report: return ["take.wav"]
    case .completions: return ["bash"]
    case .meter, .monitor, .latency, .demo, .manual, .ports: return []
    case .mark, .pause, .resume, .stop, .status: return []
    }
}

/// A value each option accepts, and the options it needs beside it to be accepted.
private func sample(_ name: CommandName, _ option: OptionSpec) -> (value: String, context: [String]) {
    switch (name, option.long) {
    case (_, "port"): return ("system:capture_1", [])
    case (_, "name"): return ("rec", [])
    case (_, "server"): return ("studio", [])
    case (_, "duration"): return ("2.5", [])
    case (.demo, "format"), (.demo, "bits"): return (option.long == "format" ? "caf" : "16", ["--record", "demo.wav"])
    case (_, "format"): return ("caf", [])
    case (_, "bits"): return ("16", [])
    case (.record, "output"), (.record, "gain"):
        return (option.long == "gain" ? "-6" : "system:playback_1", ["--monitor"])
    case (_, "output"): return ("system:playback_1", [])
    case (_, "gain"): return ("-6", [])
    case (.demo, "channels"): return ("clean", ["--denoise", "--record", "demo.wav"])
    case (_, "channels"): return ("clean", ["--denoise"])
    case (.denoise, "denoise-latency"): return ("low", [])
    case (_, "denoise-latency"): return ("low", ["--denoise"])
    case (_, "record"): return ("demo.wav", [])
    case (_, "send"): return ("system:playback_1", [])
    case (_, "return"): return ("system:capture_1", [])
    case (_, "volume"): return ("0.5", [])
    case (_, "pan"): return ("-0.25", [])
    case (_, "loops"): return ("-1", [])
    case (_, "rate"): return ("1.5", [])
    case (_, "on-route-loss"): return ("stop", [])
    case (_, "block"): return ("64", [])
    case (.demo, "quality"): return ("0.5", ["--record", "demo.ogg"])
    case (_, "quality"): return ("0.5", ["--format", "ogg"])
    case (.demo, "bitrate-mode"): return ("vbr", ["--record", "demo.mp3"])
    case (_, "bitrate-mode"): return ("vbr", ["--format", "mp3"])
    case (_, "label"): return ("primary,reference", [])
    case (_, "loudness-mode"): return ("stereo", [])
    case (_, "meter"): return ("ppm2a", [])
    case (.demo, "force"): return ("", ["--record", "demo.wav"])
    case (_, "svg"): return ("take.svg", [])
    case (_, "keep"): return ("3", [])
    case (_, "keep-for"): return ("7d", [])
    case (_, "min-free"): return ("512M", [])
    case (_, "on-file-closed"), (_, "on-event"): return ("true", [])
    case (_, "hook-timeout"): return ("5s", [])
    case (_, "pre-roll"): return ("1.5", [])
    case (_, "trigger"): return ("-20", [])
    case (_, "trigger-off"): return ("-30", ["--trigger", "-20"])
    case (_, "hang"): return ("1", ["--trigger", "-20"])
    case (_, "trigger-channel"): return ("2", ["--trigger", "-20"])
    case (_, "split"): return ("10s", [])
    case (_, "split-on-clock"): return ("", ["--split", "1h"])
    case (_, "description"): return ("studio A, take 3", [])
    case (.meter, _), (.monitor, _), (.latency, _), (.record, _), (.demo, _), (.play, _), (.denoise, _), (.report, _),
        (.completions, _), (.manual, _), (.ports, _):
        return ("", [])
    case (.mark, _), (.pause, _), (.resume, _), (.stop, _), (.status, _):
        return ("", [])
    }
}

/// Every option of every command, for the parameterized tests.
struct OptionCase: CustomStringConvertible, Sendable {
    let command: CommandName
    let option: OptionSpec
    var description: String { "\(command.rawValue) \(option.longName)" }

    static let all: [OptionCase] = CommandName.allCases.flatMap { name in
        name.spec.options.filter { $0.long != "help" && $0.long != "version" }.map {
            OptionCase(command: name, option: $0)
        }
    }
    static let withValues = all.filter { $0.option.takesValue }
    static let switches = all.filter { !$0.option.takesValue }
}

@Suite("Command line: parse")
struct CommandLineParseTests {
    // MARK: every option, both spellings

    @Test(
        "every option with a value: --opt value, --opt=value and -x value parse alike and take effect",
        arguments: OptionCase.withValues)
    func optionWithValue(_ item: OptionCase) throws {
        let (value, context) = sample(item.command, item.option)
        let base = [item.command.rawValue] + required(item.command) + context
        let separate = try Command.parse(base + [item.option.longName, value])
        let joined = try Command.parse(base + [item.option.longName + "=" + value])
        #expect(separate == joined)
        if let short = item.option.shortName {
            #expect(try Command.parse(base + [short, value]) == separate)
        }
        #expect(try Command.parse(base) != separate, "the option changed nothing")
    }

    @Test("every switch takes effect and refuses a value", arguments: OptionCase.switches)
    func switchOption(_ item: OptionCase) throws {
        let base = [item.command.rawValue] + required(item.command) + sample(item.command, item.option).context
        let set = try Command.parse(base + [item.option.longName])
        #expect(try Command.parse(base) != set, "the switch changed nothing")
        if let short = item.option.shortName { #expect(try Command.parse(base + [short]) == set) }
        #expect(
            parsed(base + [item.option.longName + "=yes"])
                == .failure(UsageError("option \(item.option.longName) takes no value")))
    }

    @Test("every option with a value: a missing value is a usage error", arguments: OptionCase.withValues)
    func missingValue(_ item: OptionCase) {
        let base = [item.command.rawValue] + required(item.command)
        #expect(
            parsed(base + [item.option.longName])
                == .failure(UsageError("option \(item.option.longName) needs a value")))
        if let short = item.option.shortName {
            #expect(parsed(base + [short]) == .failure(UsageError("option \(short) needs a value")))
        }
    }

    @Test("every command: --help gives its page, -h too, --version the version", arguments: CommandName.allCases)
    func helpAndVersion(_ name: CommandName) throws {
        #expect(try Command.parse([name.rawValue, "--help"]) == .help(HelpText.page(name.spec)))
        #expect(try Command.parse([name.rawValue, "-h"]) == .help(HelpText.page(name.spec)))
        // --help ends the scan: what follows it is not checked.
        #expect(try Command.parse([name.rawValue, "--help", "--no-such-option"]) == .help(HelpText.page(name.spec)))
        if name.spec.option(long: "version") != nil {
            #expect(try Command.parse([name.rawValue, "--version"]) == .version)
        }
    }

    @Test func topLevel() throws {
        #expect(try Command.parse([]) == .help(HelpText.main))
        for word in ["-h", "--help", "help"] { #expect(try Command.parse([word]) == .help(HelpText.main)) }
        #expect(try Command.parse(["--version"]) == .version)
        #expect(HelpText.main.contains("micmon denoise IN OUT"))
        for spec in CommandTable.visibleCommands { #expect(HelpText.main.contains("\n  micmon \(spec.name.rawValue)")) }
        #expect(!HelpText.main.contains("micmon ports"))
    }

    // MARK: what each command's options become

    @Test func meterDefaultsAndOptions() throws {
        #expect(try Command.parse(["meter"]) == .meter(CaptureOptions(kind: .meter)))
        var expected = CaptureOptions(kind: .meter)
        expected.ports = ["system:capture_1", "player:out_?"]
        expected.clientName = "mon"
        expected.serverName = "studio"
        expected.durationSeconds = 1.5
        expected.json = true
        expected.waitsForServer = true
        expected.denoises = true
        #expect(
            try Command.parse([
                "meter", "-p", "system:capture_1", "--port=player:out_?", "-n", "mon", "--server=studio",
                "--duration", "1.5", "--json", "--wait-server", "--denoise",
            ]) == .meter(expected))
        // A later value overrides an earlier one; -p adds.
        #expect(
            try Command.parse([
                "meter", "--duration=1", "--duration", "1.5", "-n", "x", "--name=mon", "-s", "studio",
                "-p", "system:capture_1", "-p", "player:out_?", "--json", "--wait-server",
                "--denoise",
            ]) == .meter(expected))
    }

    @Test func recordOptions() throws {
        var expected = CaptureOptions(kind: .record)
        expected.filePath = "take.flac"
        expected.format = AudioFileFormat(container: .flac, encoding: .pcm24)
        #expect(try Command.parse(["record", "take.flac"]) == .record(expected))
        expected.format = AudioFileFormat(container: .wav, encoding: .pcm16)
        expected.force = true
        expected.monitors = true
        expected.monitorDestinations = ["system:playback_1"]
        expected.monitorGainDecibels = -6
        expected.denoises = true
        expected.denoiseLatency = .low
        expected.recordedChannels = .clean
        #expect(
            try Command.parse([
                "record", "take.flac", "--format=WAV", "--bits", "16", "--force", "--monitor",
                "-o", "system:playback_1", "--gain=-6", "--denoise", "--denoise-latency=low", "--channels", "clean",
            ])
                == .record(expected))
        // The container from the extension, float by default; "-" is stdout (AU, float, by
        // default: a header that needs no seek), not an option; a file named - is ./-.
        guard case .record(let stdout) = try Command.parse(["record", "-"]) else {
            Issue.record("not record")
            return
        }
        #expect(stdout.filePath == "-" && stdout.format == AudioFileFormat(container: .au, encoding: .float))
        #expect(stdout.streamsToStandardOutput)
        guard case .record(let dashFile) = try Command.parse(["record", "./-"]) else {
            Issue.record("not record")
            return
        }
        #expect(!dashFile.streamsToStandardOutput && dashFile.format?.container == .wav)
        #expect(throws: UsageError.self) { try Command.parse(["record", "-", "--format", "wav"]) }
        #expect(throws: UsageError.self) { try Command.parse(["record", "-", "--wait-server"]) }
        #expect(throws: UsageError.self) { try Command.parse(["record", "x.wav", "--transport", "--transport-split"]) }
        guard case .control(let mark) = try Command.parse(["mark", "take", "two", "-n", "rec"]) else {
            Issue.record("not mark")
            return
        }
        #expect(mark.line == "mark take two" && mark.recorderName == "rec")
        #expect(throws: UsageError.self) { try Command.parse(["pause", "now"]) }
        guard case .record(let caf) = try Command.parse(["record", "x.CAF"]) else {
            Issue.record("not record")
            return
        }
        #expect(caf.format == AudioFileFormat(container: .caf, encoding: .float))
        guard case .record(let dashed) = try Command.parse(["record", "--", "--take.wav"]) else {
            Issue.record("not record")
            return
        }
        #expect(dashed.filePath == "--take.wav")
    }

    @Test func monitorOptions() throws {
        var expected = CaptureOptions(kind: .monitor)
        #expect(expected.monitors)
        #expect(try Command.parse(["monitor"]) == .monitor(expected))
        expected.monitorDestinations = ["a:in", "b:in"]
        expected.monitorGainDecibels = 24
        #expect(try Command.parse(["monitor", "-o", "a:in", "--output=b:in", "--gain", "24"]) == .monitor(expected))
    }

    @Test func demoOptions() throws {
        #expect(try Command.parse(["demo"]) == .demo(CaptureOptions(kind: .demo)))
        var expected = CaptureOptions(kind: .demo)
        expected.filePath = "demo.flac"
        expected.format = AudioFileFormat(container: .flac, encoding: .pcm16)
        expected.force = true
        expected.denoises = true
        expected.recordedChannels = .raw
        expected.durationSeconds = 3
        expected.clientName = "d"
        #expect(
            try Command.parse([
                "demo", "--record=demo.flac", "--bits=16", "--force", "--denoise", "--channels=raw",
                "--duration=3", "--name=d",
            ]) == .demo(expected))
    }

    @Test func latencyOptions() throws {
        #expect(try Command.parse(["latency"]) == .latency(LatencyOptions()))
        var expected = LatencyOptions()
        expected.sendPort = "system:playback_1"
        expected.returnPort = "system:capture_1"
        expected.durationSeconds = 2
        expected.json = true
        expected.clientName = "lat"
        expected.serverName = "s"
        #expect(
            try Command.parse([
                "latency", "--send=system:playback_1", "--return", "system:capture_1",
                "--duration=2", "--json", "-n", "lat", "-s", "s",
            ]) == .latency(expected))
        var loop = LatencyOptions()
        loop.softwareLoop = true
        #expect(try Command.parse(["latency", "--software-loop"]) == .latency(loop))
    }

    @Test func playOptions() throws {
        var expected = PlayOptions()
        expected.path = "song.wav"
        #expect(try Command.parse(["play", "song.wav"]) == .play(expected))
        expected.destinations = ["a:in", "b:in"]
        expected.volume = 0.25
        expected.pan = -1
        expected.loops = -1
        expected.rate = 0.5
        expected.onRouteLoss = .stop
        expected.json = true
        expected.clientName = "p"
        expected.serverName = "s"
        // A value that looks like a negative number is a value, and a lone number a positional.
        #expect(
            try Command.parse([
                "play", "-o", "a:in", "--output=b:in", "--volume", "0.25", "--pan=-1", "--loops", "-1",
                "--rate=0.5", "--on-route-loss", "stop", "--json", "-n", "p", "-s", "s", "song.wav",
            ])
                == .play(expected))
        let configuration = expected.configuration
        #expect(configuration.path == "song.wav" && configuration.destinations == ["a:in", "b:in"])
        #expect(configuration.volume == 0.25 && configuration.pan == -1 && configuration.loops == -1)
        #expect(configuration.rate == 0.5 && configuration.onRouteLoss == .stop)
        #expect(configuration.clientName == "p" && configuration.serverName == "s")
        guard case .play(let numbered) = try Command.parse(["play", "-5"]) else {
            Issue.record("not play")
            return
        }
        #expect(numbered.path == "-5")
    }

    @Test func denoiseOptions() throws {
        var expected = DenoiseOptions()
        expected.inputPath = "in.wav"
        expected.outputPath = "out.flac"
        expected.format = AudioFileFormat(container: .flac, encoding: .pcm24)
        #expect(try Command.parse(["denoise", "in.wav", "out.flac"]) == .denoise(expected))
        expected.latency = .low
        #expect(try Command.parse(["denoise", "in.wav", "out.flac", "--denoise-latency", "low"]) == .denoise(expected))
        expected.latency = .standard
        expected.blockFrames = 8192
        expected.force = true
        expected.format = AudioFileFormat(container: .w64, encoding: .pcm32)
        #expect(
            try Command.parse([
                "denoise", "--block=8192", "in.wav", "--force", "out.flac", "--format", "w64",
                "--bits=32",
            ]) == .denoise(expected))
    }

    @Test func textCommands() throws {
        for shell in micmon.Shell.allCases {
            #expect(try Command.parse(["completions", shell.rawValue]) == .completions(shell))
        }
        #expect(try Command.parse(["manual"]) == .manual)
        #expect(try Command.parse(["ports"]) == .ports(PortsOptions()))
        #expect(
            try Command.parse(["ports", "--output", "--server=x"])
                == .ports(PortsOptions(output: true, serverName: "x")))
        #expect(
            try Command.parse(["ports", "--input", "-s", "x"]) == .ports(PortsOptions(input: true, serverName: "x")))
    }

    // MARK: bad input

    struct BadParse: CustomStringConvertible, Sendable {
        let arguments: [String]
        /// The whole one-line message.
        let message: String
        var description: String { arguments.joined(separator: " ") }
        init(_ arguments: [String], _ message: String) {
            self.arguments = arguments
            self.message = message
        }
    }

    static let badInputs: [BadParse] = [
        // commands and options
        BadParse(
            ["recrod", "x.wav"],
            "unknown command 'recrod' (commands: meter, record, play, monitor, latency, demo, denoise, report, completions, manual, mark, pause, resume, stop, status; see micmon --help)"
        ),
        BadParse(["meter", "--bogus"], "unknown option '--bogus' for micmon meter (see micmon meter --help)"),
        BadParse(["meter", "--bogus=1"], "unknown option '--bogus' for micmon meter (see micmon meter --help)"),
        BadParse(["meter", "-x"], "unknown option '-x' for micmon meter (see micmon meter --help)"),
        BadParse(["meter", "-pfoo"], "unknown option '-pfoo' for micmon meter (see micmon meter --help)"),
        BadParse(
            ["meter", "--software-loop"], "unknown option '--software-loop' for micmon meter (see micmon meter --help)"),
        BadParse(["meter", "-o", "x"], "unknown option '-o' for micmon meter (see micmon meter --help)"),
        BadParse(
            ["latency", "--denoise"], "unknown option '--denoise' for micmon latency (see micmon latency --help)"),
        BadParse(
            ["latency", "--wait-server"],
            "unknown option '--wait-server' for micmon latency (see micmon latency --help)"),
        BadParse(["demo", "--wait-server"], "unknown option '--wait-server' for micmon demo (see micmon demo --help)"),
        BadParse(
            ["play", "x.wav", "--duration", "1"], "unknown option '--duration' for micmon play (see micmon play --help)"
        ),
        BadParse(["play", "x.wav", "-p", "a"], "unknown option '-p' for micmon play (see micmon play --help)"),
        BadParse(
            ["denoise", "a", "b", "--fast"], "unknown option '--fast' for micmon denoise (see micmon denoise --help)"),
        BadParse(
            ["denoise", "a", "b", "-n", "x"], "unknown option '-n' for micmon denoise (see micmon denoise --help)"),
        BadParse(["manual", "--json"], "unknown option '--json' for micmon manual (see micmon manual --help)"),
        // refusals
        BadParse(
            ["meter", "--bits", "16"],
            "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(
            ["monitor", "--format=wav"],
            "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(
            ["meter", "--force"], "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(
            ["latency", "--force"], "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(
            ["demo", "--bits", "16"],
            "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(
            ["demo", "--force"], "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(
            ["latency", "-p", "system:capture_1"],
            "-p does not apply to micmon latency (use --send and --return, or --software-loop)"),
        BadParse(
            ["latency", "--port=system:capture_1"],
            "-p does not apply to micmon latency (use --send and --return, or --software-loop)"),
        BadParse(["demo", "-s", "x"], "-s does not apply to micmon demo (it starts a private server of its own)"),
        BadParse(["demo", "-p", "x"], "-p does not apply to micmon demo (the demo source feeds the inputs)"),
        // values
        BadParse(["meter", "--duration", "0"], "--duration must be between 0.001 and 2678400 s (got 0)"),
        BadParse(["meter", "--duration=-2"], "--duration must be between 0.001 and 2678400 s (got -2)"),
        BadParse(["meter", "--duration", "ten"], "--duration needs a number, not 'ten'"),
        BadParse(["meter", "--duration", "inf"], "--duration needs a number, not 'inf'"),
        BadParse(["record", "x.wav", "--duration", "nan"], "--duration needs a number, not 'nan'"),
        BadParse(["monitor", "--duration", ""], "--duration needs a number, not ''"),
        BadParse(["demo", "--duration", "0"], "--duration must be between 0.001 and 2678400 s (got 0)"),
        BadParse(
            ["latency", "--software-loop", "--duration", "0"], "--duration must be between 0.001 and 2678400 s (got 0)"),
        BadParse(["latency", "--duration", "-3"], "--duration must be between 0.001 and 2678400 s (got -3)"),
        BadParse(["meter", "--duration", "1e300"], "--duration must be between 0.001 and 2678400 s (got 1e300)"),
        BadParse(["record", "x.wav", "--duration", "0x10"], "--duration needs a number, not '0x10'"),
        BadParse(["latency", "--duration=2678401"], "--duration must be between 0.001 and 2678400 s (got 2678401)"),
        BadParse(
            ["play", "x.wav", "--loops", "1000001"], "--loops needs a whole number from -1 to 1000000, not '1000001'"),
        BadParse(
            ["play", "x.wav", "--loops", "9223372036854775808"],
            "--loops needs a whole number from -1 to 1000000, not '9223372036854775808'"),
        BadParse(["meter", "-n", ""], "--name needs a non-empty client name"),
        BadParse(["latency", "--name="], "--name needs a non-empty client name"),
        BadParse(["play", "x.wav", "-n", ""], "--name needs a non-empty client name"),
        BadParse(["demo", "--name="], "--name needs a non-empty client name"),
        BadParse(["monitor", "--gain", "25"], "--gain must be between -60 and 24 dB (got 25)"),
        BadParse(["monitor", "--gain=-61"], "--gain must be between -60 and 24 dB (got -61)"),
        BadParse(
            ["record", "x.wav", "--monitor", "--gain", "loud"], "--gain needs a number, not 'loud'"
        ),
        BadParse(
            ["record", "x.wav", "--format", "aiff"],
            "unknown --format 'aiff' (wav, w64, rf64, caf, flac, ogg, opus, mp3, au)"),
        BadParse(
            ["record", "take.xyz"],
            "take.xyz: .xyz is not a format micmon writes (wav, w64, rf64, caf, flac, ogg, opus, mp3, au); give --format F or a name that ends in one of those"
        ),
        BadParse(
            ["denoise", "a.wav", "clean.m4a"],
            "clean.m4a: .m4a is not a format micmon writes (wav, w64, rf64, caf, flac, ogg, opus, mp3, au); give --format F or a name that ends in one of those"
        ),
        BadParse(["record", "take.ogg", "--bits", "16"], "--bits does not apply to ogg (its codec sets the encoding)"),
        BadParse(
            ["record", "take.opus", "--bitrate-mode", "cbr"],
            "--bitrate-mode applies only to mp3 (libsndfile's opus has none)"),
        BadParse(
            ["record", "take.wav", "--quality", "0.5"], "--quality and --bitrate-mode apply only to ogg, opus and mp3"),
        BadParse(["record", "take.mp3", "--bitrate-mode", "abr"], "unknown --bitrate-mode 'abr' (cbr, vbr)"),
        BadParse(["record", "take.mp3", "--quality", "1.5"], "--quality must be between 0 and 1 (got 1.5)"),
        BadParse(
            ["meter", "--quality", "1"],
            "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"),
        BadParse(["record", "x.wav", "--bits", "12"], "unknown --bits '12' (16, 24, 32, float)"),
        BadParse(
            ["record", "x.wav", "--meter", "ppm3"],
            "unknown --meter 'ppm3' (peak, ppm1, ppm2a, ppm2b, vu, k12, k14, k20)"),
        BadParse(
            ["meter", "--loudness-mode", "surround"],
            "unknown --loudness-mode 'surround' (per-channel, dual-mono, stereo, off)"),
        BadParse(
            ["record", "x.wav", "--loudness-mode", "off", "--meter", "vu"],
            "--meter vu runs on the analysis thread, which --loudness-mode off turns off"),
        BadParse(
            ["record", "x.wav", "--loudness-mode", "off", "--report"],
            "--report needs the take's analysis, which --loudness-mode off turns off"),
        BadParse(
            ["record", "take.flac", "--bits", "float"],
            "flac cannot hold float samples (libsndfile refuses the combination); try --bits 24"),
        BadParse(
            ["record", "take.flac", "--bits=32"],
            "flac cannot hold 32-bit samples (libsndfile refuses the combination); try --bits 24"),
        BadParse(
            ["demo", "--record", "d.wav", "--format", "ogg3"],
            "unknown --format 'ogg3' (wav, w64, rf64, caf, flac, ogg, opus, mp3, au)"),
        BadParse(
            ["record", "x.wav", "--denoise", "--channels", "left"], "--channels needs raw, clean or all, not 'left'"),
        BadParse(["record", "x.wav", "--channels", "raw"], "--channels applies only when recording with --denoise"),
        BadParse(["demo", "--denoise", "--channels", "raw"], "--channels applies only when recording with --denoise"),
        BadParse(["meter", "--denoise-latency", "low"], "--denoise-latency applies only with --denoise"),
        BadParse(
            ["monitor", "--denoise", "--denoise-latency", "fast"], "--denoise-latency needs standard or low, not 'fast'"
        ),
        BadParse(
            ["record", "x.wav", "-o", "a:in"],
            "-o and --gain apply only when monitoring (micmon monitor, or record --monitor)"),
        BadParse(
            ["record", "x.wav", "--gain", "3"],
            "-o and --gain apply only when monitoring (micmon monitor, or record --monitor)"),
        BadParse(
            ["latency", "--return", "system:capture_1", "--software-loop"],
            "--return and --software-loop both feed in_1; give one of them"),
        BadParse(["play", "x.wav", "--volume", "1.5"], "--volume must be between 0 and 1 (got 1.5)"),
        BadParse(["play", "x.wav", "--volume=loud"], "--volume needs a number, not 'loud'"),
        BadParse(["play", "x.wav", "--pan", "-2"], "--pan must be between -1 and 1 (got -2)"),
        BadParse(["play", "x.wav", "--rate", "3"], "--rate must be between 0.5 and 2 (got 3)"),
        BadParse(["play", "x.wav", "--rate=0.1"], "--rate must be between 0.5 and 2 (got 0.1)"),
        BadParse(["play", "x.wav", "--loops", "-2"], "--loops needs a whole number from -1 to 1000000, not '-2'"),
        BadParse(["play", "x.wav", "--loops", "1.5"], "--loops needs a whole number from -1 to 1000000, not '1.5'"),
        BadParse(["play", "x.wav", "--on-route-loss", "wait"], "--on-route-loss takes pause or stop, not 'wait'"),
        BadParse(
            ["denoise", "a", "b", "--block", "0"], "--block needs a whole number from 1 to 8192, not '0'"),
        BadParse(
            ["denoise", "a", "b", "--block=8193"], "--block needs a whole number from 1 to 8192, not '8193'"),
        BadParse(
            ["denoise", "a", "b.flac", "--bits", "float"],
            "flac cannot hold float samples (libsndfile refuses the combination); try --bits 24"),
        // positionals
        BadParse(["record"], "record needs a FILE to write (see micmon record --help)"),
        BadParse(["record", "a.wav", "b.wav"], "record takes one FILE, got: a.wav b.wav"),
        BadParse(["meter", "take.wav"], "unexpected argument 'take.wav' for micmon meter"),
        BadParse(["monitor", "x"], "unexpected argument 'x' for micmon monitor"),
        BadParse(["demo", "x"], "unexpected argument 'x' for micmon demo"),
        BadParse(["latency", "5"], "unexpected argument '5' for micmon latency"),
        BadParse(["play"], "play needs a FILE (see micmon play --help)"),
        BadParse(["play", "a.wav", "b.wav"], "play takes one FILE, got: a.wav b.wav"),
        BadParse(["denoise", "in.wav"], "denoise needs IN and OUT files (see micmon denoise --help)"),
        BadParse(["denoise", "a", "b", "c"], "denoise needs IN and OUT files (see micmon denoise --help)"),
        BadParse(["completions"], "completions needs one SHELL: bash, zsh or fish (see micmon completions --help)"),
        BadParse(
            ["completions", "tcsh"], "completions needs one SHELL: bash, zsh or fish (see micmon completions --help)"),
        BadParse(["manual", "extra"], "unexpected argument 'extra' for micmon manual"),
        BadParse(["ports", "extra"], "unexpected argument 'extra' for micmon ports"),
    ]

    @Test("bad input is a usage error with a one-line reason", arguments: badInputs)
    func badInput(_ input: BadParse) {
        #expect(parsed(input.arguments) == .failure(UsageError(input.message)))
        #expect(!input.message.contains("\n"))
    }

    // MARK: numeric ranges (issue 23: `--duration 1e300` crashed after truncating FILE)

    /// Every numeric option of every command, from the tables.
    static let numericOptions: [OptionCase] = OptionCase.withValues.filter { $0.option.range != nil }

    /// The arguments that make `option` parse on its command (its positionals and companions).
    static func arguments(_ item: OptionCase, _ value: String) -> [String] {
        var words = [item.command.rawValue]
        switch item.command {
        case .record, .play: words.append("take.wav")
        case .denoise: words += ["in.wav", "out.wav"]
        case .report: words.append("take.wav")
        default: break
        }
        if item.command == .record && item.option.long == "gain" { words.append("--monitor") }
        if item.command == .record && ["trigger-off", "hang", "trigger-channel"].contains(item.option.long) {
            words += ["--trigger", "0"]
        }
        if item.option.long == "quality" {
            words += item.command == .demo ? ["--record", "d.ogg"] : ["--format", "ogg"]
        }
        return words + [item.option.longName, value]
    }

    @Test("every numeric option has a range, and --help shows it", arguments: OptionCase.withValues)
    func everyNumberHasARange(_ item: OptionCase) {
        if case .number = item.option.kind {
            let range = try! #require(item.option.range)
            #expect(range.lower < range.upper)
            let page = HelpText.page(item.command.spec).split(whereSeparator: { $0 == " " || $0 == "\n" })
            #expect(page.joined(separator: " ").contains("Range: " + range.text + (range.isWhole ? "," : ".")))
        }
    }

    @Test("each numeric option: its bounds parse, just outside them is a usage error", arguments: numericOptions)
    func bounds(_ item: OptionCase) throws {
        let range = try #require(item.option.range)
        let step = range.isWhole ? 1 : max(range.lower.magnitude, range.upper.magnitude) * 1e-6
        for value in [range.lower, range.upper] {
            let text = NumberRange.plain(value)
            #expect(throws: Never.self, "\(item) \(text)") { try Command.parse(Self.arguments(item, text)) }
        }
        for value in [range.lower - step, range.upper + step, 1e300, -1e300] {
            let text = range.isWhole ? String(format: "%.0f", value) : String(value)
            #expect(throws: UsageError.self, "\(item) \(text)") { try Command.parse(Self.arguments(item, text)) }
        }
        for text in ["nan", "inf", "-inf", "", "x", "0x10"] {
            #expect(throws: UsageError.self, "\(item) '\(text)'") { try Command.parse(Self.arguments(item, text)) }
        }
    }

    @Test("the denoise help states the suppressor's delay as the DSP code has it")
    func denoiseDelayFigure() throws {
        let suppressor = try NoiseSuppressor(sampleRate: 48_000)
        #expect(DenoiseFigures.delayFrames == suppressor.latencyFrames && DenoiseFigures.delayFrames > 0)
        let page = HelpText.page(CommandName.denoise.spec)
        let milliseconds = Double(suppressor.latencyFrames) / 48
        #expect(
            page.contains("\(suppressor.latencyFrames) frames (\(String(format: "%.1f", milliseconds)) ms at 48 kHz"))
        #expect(!page.contains("8 ms frame"))
    }

    @Test("every help page fits 80 columns", arguments: CommandName.allCases)
    func helpFits(_ name: CommandName) {
        for line in (HelpText.page(name.spec) + "\n" + HelpText.main).split(separator: "\n") {
            #expect(line.count <= HelpText.width, "\(name.rawValue): \(line)")
        }
    }
}

/// The built micmon run as a user runs it: bad input exits 64 with one line on stderr and
/// creates nothing; no server exits 69 with the hint.
@Suite("Command line: process")
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
        BadInput(
            name: "zero duration", arguments: ["meter", "--duration=0"],
            message: "--duration must be between 0.001 and 2678400 s"),
        BadInput(name: "record without a file", arguments: ["record"], message: "needs a FILE"),
        BadInput(
            name: "flac cannot hold float", arguments: ["record", "SCRATCH/take.flac", "--bits", "float"],
            message: "flac cannot hold float"),
        BadInput(
            name: "missing folder", arguments: ["record", "SCRATCH/no/such/folder/take.wav"], message: "does not exist"),
        BadInput(
            name: "unwritable path", arguments: ["record", "/proc/micmon-take.wav"],
            message: "cannot write /proc/micmon-take.wav"),
        BadInput(name: "a directory as FILE", arguments: ["record", "SCRATCH"], message: "is a directory"),
        BadInput(
            name: "existing file without --force", arguments: ["record", "SCRATCH/existing.wav"],
            message: "exists; use --force"),
        BadInput(
            name: "demo: existing file without --force", arguments: ["demo", "--record=SCRATCH/existing.wav"],
            message: "exists; use --force"),
        BadInput(
            name: "format options without a file", arguments: ["meter", "--bits", "16"], message: "only when recording"),
        BadInput(
            name: "latency: -p", arguments: ["latency", "-p", "system:capture_1"],
            message: "-p does not apply to micmon latency"),
        BadInput(
            name: "play: no such file", arguments: ["play", "SCRATCH/none.wav"], message: "cannot play SCRATCH/none.wav"
        ),
        BadInput(
            name: "play: a directory", arguments: ["play", "SCRATCH"], message: "is a directory, not a sound file"),
        BadInput(
            name: "play: bad volume", arguments: ["play", "SCRATCH/existing.wav", "--volume=2"],
            message: "--volume must be between"),
        BadInput(
            name: "completions: unknown shell", arguments: ["completions", "tcsh"],
            message: "completions needs one SHELL"),
        // Rotation, pre-roll and trigger (#18): bad durations, levels and patterns.
        BadInput(
            name: "split: not a duration", arguments: ["record", "SCRATCH/%H%M%S.wav", "--split", "10x"],
            message: "--split needs a duration such as 30s"),
        BadInput(
            name: "split: too short", arguments: ["record", "SCRATCH/%H%M%S.wav", "--split", "500ms"],
            message: "--split needs a duration from 1 s to 31 days"),
        BadInput(
            name: "split: a pattern without time fields", arguments: ["record", "SCRATCH/take.wav", "--split", "1h"],
            message: "would name every file the same"),
        BadInput(
            name: "split: only %% in the pattern", arguments: ["record", "SCRATCH/100%%.wav", "--split", "1h"],
            message: "would name every file the same"),
        BadInput(
            name: "split-on-clock: a split that does not divide a day",
            arguments: ["record", "SCRATCH/%H%M%S.wav", "--split", "7m", "--split-on-clock"],
            message: "--split-on-clock needs a --split that divides a day"),
        BadInput(
            name: "split-on-clock without split", arguments: ["record", "SCRATCH/%H%M%S.wav", "--split-on-clock"],
            message: "--split-on-clock applies only with --split"),
        BadInput(
            name: "pre-roll above 60 s", arguments: ["record", "SCRATCH/t.wav", "--pre-roll", "61"],
            message: "--pre-roll must be between 0 and 60 s"),
        BadInput(
            name: "trigger above 0 dBFS", arguments: ["record", "SCRATCH/t.wav", "--trigger", "3"],
            message: "--trigger must be between -120 and 0 dBFS"),
        BadInput(
            name: "trigger-off above the trigger",
            arguments: ["record", "SCRATCH/t.wav", "--trigger", "-30", "--trigger-off", "-20"],
            message: "--trigger-off (-20 dB) must not be above --trigger (-30 dB)"),
        BadInput(
            name: "report with split", arguments: ["record", "SCRATCH/%H%M%S.wav", "--split", "1h", "--report"],
            message: "--report applies to a single take"),
        BadInput(
            name: "hang without trigger", arguments: ["record", "SCRATCH/t.wav", "--hang", "2"],
            message: "apply only with --trigger"),
        BadInput(
            name: "pattern: folders under a regular file",
            arguments: ["record", "SCRATCH/existing.wav/%Y/%H%M%S.wav", "--split", "1h"],
            message: "is not a folder"),
        BadInput(
            name: "pattern: folders under an unwritable folder",
            arguments: ["record", "/proc/micmon-%Y/%H%M%S.wav", "--split", "1h"],
            message: "cannot make the folders of"),
    ]

    @Test("bad input exits 64 with a one-line reason and creates nothing", arguments: badInputs)
    func badInputIsRefused(_ input: BadInput) throws {
        let scratch = TestEnvironment.scratchFolder("cli")
        let existing = scratch + "/existing.wav"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch).sorted()
        // No server under this name: if micmon got as far as JACK, the exit code would be 69.
        let arguments = input.arguments.map { $0.replacingOccurrences(of: "SCRATCH", with: scratch) }
        let result = try MicmonProcess.run(
            arguments, environment: ["JACK_DEFAULT_SERVER": "micmon-no-such-server"],
            timeout: 20)
        #expect(result.exitCode == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("micmon: "))
        #expect(
            result.stderr.contains(input.message.replacingOccurrences(of: "SCRATCH", with: scratch)),
            "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == before)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: "/proc/micmon-take.wav"))
    }

    @Test("no JACK server: a clear message pointing to micmon demo, exit 69, nothing created")
    func noServer() throws {
        let scratch = TestEnvironment.scratchFolder("noserver")
        let result = try MicmonProcess.run(
            ["record", scratch + "/take.wav", "-s", "micmon-no-such-server"], timeout: 30)
        #expect(result.exitCode == 69)
        #expect(result.stderr.contains("cannot connect to the JACK server 'micmon-no-such-server'"))
        #expect(result.stderr.contains("`jackd -n micmon-no-such-server -d dummy`"))
        #expect(result.stderr.contains("micmon demo"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
        for arguments in [["latency", "--server=micmon-no-such-server"], ["meter", "-s", "micmon-no-such-server"]] {
            let other = try MicmonProcess.run(arguments, timeout: 30)
            #expect(other.exitCode == 69)
            #expect(other.stderr.contains("start a server first (e.g. `jackd -n micmon-no-such-server -d alsa`"))
        }
    }

    @Test("an unknown port lists the available output ports and exits 64")
    func unknownPort() throws {
        let server = try SharedTestServer.require()
        let result = try MicmonProcess.run(
            ["meter", "-s", server.name, "-p", "nosuch:port_*", "--duration", "1"], timeout: 30)
        #expect(result.exitCode == 64)
        #expect(result.stderr.contains("no JACK output port matches 'nosuch:port_*'"))
        #expect(result.stderr.contains(server.source.outputPorts[0]))
    }

    @Test("--help, COMMAND --help and --version print on stdout and exit 0")
    func helpAndVersion() throws {
        let result = try MicmonProcess.run(["--help"], timeout: 10)
        #expect(result.exitCode == 0)
        #expect(result.stdout == HelpText.main + "\n")
        for name in CommandName.allCases {
            let help = try MicmonProcess.run([name.rawValue, "--help"], timeout: 10)
            #expect(help.exitCode == 0)
            #expect(help.stdout == HelpText.page(name.spec) + "\n")
        }
        let version = try MicmonProcess.run(["--version"], timeout: 10)
        #expect(version.stdout == CommandTable.version + "\n")
    }
}
