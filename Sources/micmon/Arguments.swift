import Engine
import SoundFile

/// A usage error: one line for stderr, exit 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

enum Command: String {
    case meter, record, demo, monitor, latency
}

/// What the user asked for, parsed and checked, before anything is started or created.
struct Invocation {
    var command: Command
    var filePath: String?
    var clientName = "micmon"
    var serverName: String?
    var ports: [String] = []
    var json = false
    var durationSeconds: Double?
    var format: AudioFileFormat?
    var force = false
    /// `--wait-server`: after the server goes away, wait for it and go on (continuation files).
    var waitsForServer = false
    /// Monitoring (`monitor`, or `record --monitor`): destinations and gain.
    var monitors = false
    var monitorDestinations: [String] = []
    var monitorGainDecibels = 0.0
    /// `latency`: where out_1 goes, what feeds in_1, or out_1 straight into in_1.
    var sendPort: String?
    var returnPort: String?
    var softwareLoop = false
    /// `--denoise`: dual-mic noise suppression (in_1 primary, in_2 reference).
    var denoises = false
    /// `--channels`: what a denoised recording holds.
    var recordedChannels: CaptureConfiguration.RecordedChannels = .all
}

/// The result of parsing: run something, or print a text and exit.
enum ParseOutcome {
    case run(Invocation)
    case help(String)
    case version
}

/// Parses `micmon COMMAND [options]`. Pure: no I/O, so tests can call it.
enum ArgumentParser {
    static func parse(_ arguments: [String]) throws(UsageError) -> ParseOutcome {
        guard let first = arguments.first else { return .help(Usage.main) }
        if first == "-h" || first == "--help" || first == "help" { return .help(Usage.main) }
        if first == "--version" { return .version }
        guard let command = Command(rawValue: first) else {
            throw UsageError("unknown command '\(first)' (commands: meter, record, play, monitor, latency, demo; see micmon --help)")
        }
        var invocation = Invocation(command: command)
        invocation.monitors = command == .monitor
        var formatName: String?
        var bitsName: String?
        var positional: [String] = []
        var index = 1
        var channelsGiven = false

        func value(for option: String, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else { throw UsageError("option \(option) needs a value") }
            return arguments[index]
        }

        while index < arguments.count {
            let argument = arguments[index]
            var option = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            switch option {
            case "-h", "--help":
                return .help(helpText(for: command))
            case "--version":
                return .version
            case "-n", "--name":
                invocation.clientName = try value(for: option, inline: inline)
                if invocation.clientName.isEmpty { throw UsageError("--name needs a non-empty client name") }
            case "-s", "--server":
                invocation.serverName = try value(for: option, inline: inline)
            case "-p", "--port":
                invocation.ports.append(try value(for: option, inline: inline))
            case "--json":
                invocation.json = true
            case "--force":
                invocation.force = true
            case "--wait-server" where command != .demo && command != .latency:
                invocation.waitsForServer = true
            case "--duration":
                let text = try value(for: option, inline: inline)
                guard let seconds = Double(text), seconds.isFinite else {
                    throw UsageError("--duration needs a number of seconds, not '\(text)'")
                }
                guard seconds > 0 else { throw UsageError("--duration must be greater than 0 (got \(text))") }
                invocation.durationSeconds = seconds
            case "--monitor" where command == .record:
                invocation.monitors = true
            case "-o" where command == .monitor || command == .record, "--output" where command == .monitor || command == .record:
                invocation.monitorDestinations.append(try value(for: option, inline: inline))
            case "--gain" where command == .monitor || command == .record:
                let text = try value(for: option, inline: inline)
                guard let gain = Double(text), gain.isFinite, gain >= -60, gain <= 24 else {
                    throw UsageError("--gain needs a number of dB from -60 to 24, not '\(text)'")
                }
                invocation.monitorGainDecibels = gain
            case "--format":
                formatName = try value(for: option, inline: inline)
            case "--bits":
                bitsName = try value(for: option, inline: inline)
            case "--send" where command == .latency:
                invocation.sendPort = try value(for: option, inline: inline)
            case "--return" where command == .latency:
                invocation.returnPort = try value(for: option, inline: inline)
            case "--software-loop" where command == .latency:
                invocation.softwareLoop = true
            case "--denoise" where command != .latency:
                invocation.denoises = true
            case "--channels" where command == .record || command == .demo:
                let text = try value(for: option, inline: inline)
                guard let channels = CaptureConfiguration.RecordedChannels(rawValue: text) else {
                    throw UsageError("--channels needs raw, clean or all, not '\(text)'")
                }
                channelsGiven = true
                invocation.recordedChannels = channels
            case "--record" where command == .demo:
                invocation.filePath = try value(for: option, inline: inline)
            default:
                if argument.hasPrefix("-") && argument != "-" {
                    throw UsageError("unknown option '\(argument)' for micmon \(command.rawValue) (see micmon \(command.rawValue) --help)")
                }
                positional.append(argument)
            }
            index += 1
        }

        switch command {
        case .record:
            guard let path = positional.first else { throw UsageError("record needs a FILE to write (see micmon record --help)") }
            guard positional.count == 1 else { throw UsageError("record takes one FILE, got: \(positional.joined(separator: " "))") }
            invocation.filePath = path
        case .meter, .demo, .monitor, .latency:
            if let extra = positional.first { throw UsageError("unexpected argument '\(extra)' for micmon \(command.rawValue)") }
        }

        if let path = invocation.filePath {
            invocation.format = try chooseFormat(path: path, formatName: formatName, bitsName: bitsName)
        } else if formatName != nil || bitsName != nil || invocation.force {
            throw UsageError("--format, --bits and --force apply only when recording")
        }
        if channelsGiven && (!invocation.denoises || invocation.filePath == nil) {
            throw UsageError("--channels applies only when recording with --denoise")
        }
        if command == .latency {
            if invocation.returnPort != nil && invocation.softwareLoop {
                throw UsageError("--return and --software-loop both feed in_1; give one of them")
            }
            if !invocation.ports.isEmpty {
                throw UsageError("-p does not apply to micmon latency (use --send and --return, or --software-loop)")
            }
        }
        if !invocation.monitors && (!invocation.monitorDestinations.isEmpty || invocation.monitorGainDecibels != 0) {
            throw UsageError("-o and --gain apply only when monitoring (micmon monitor, or record --monitor)")
        }
        return .run(invocation)
    }

    static func helpText(for command: Command) -> String {
        switch command {
        case .meter: return Usage.meter
        case .record: return Usage.record
        case .demo: return Usage.demo
        case .monitor: return Usage.monitor
        case .latency: return Usage.latency
        }
    }

    /// The container from `--format`, else from FILE's extension, else WAV; the encoding from
    /// `--bits`, else float (24-bit for FLAC, which has no float). Checked with libsndfile.
    static func chooseFormat(path: String, formatName: String?, bitsName: String?) throws(UsageError) -> AudioFileFormat {
        let container: ContainerFormat
        if let formatName {
            guard let chosen = ContainerFormat(rawValue: formatName.lowercased()) else {
                throw UsageError("unknown --format '\(formatName)' (wav, w64, rf64, caf, flac)")
            }
            container = chosen
        } else if let dot = path.lastIndex(of: "."), let byExtension = ContainerFormat(rawValue: path[path.index(after: dot)...].lowercased()) {
            container = byExtension
        } else {
            container = .wav
        }
        let encoding: SampleEncoding
        if let bitsName {
            guard let chosen = SampleEncoding(rawValue: bitsName.lowercased()) else {
                throw UsageError("unknown --bits '\(bitsName)' (16, 24, 32, float)")
            }
            encoding = chosen
        } else {
            encoding = container == .flac ? .pcm24 : .float
        }
        let format = AudioFileFormat(container: container, encoding: encoding)
        guard format.isWritable() else {
            throw UsageError("\(container.rawValue) cannot hold \(encoding == .float ? "float" : "\(encoding.bitDepth)-bit") samples (libsndfile refuses the combination); try --bits 24")
        }
        return format
    }
}
