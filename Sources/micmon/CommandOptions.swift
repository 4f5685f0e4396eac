// Each command's options, parsed and checked from the scanned arguments. Pure (no I/O, no
// JACK), so tests call `parse` directly; any thread.
import DSP
import Engine
import Jack
import SoundFile

/// What `micmon` was asked to do.
enum Command: Equatable, Sendable {
    case meter(CaptureOptions)
    case record(CaptureOptions)
    case monitor(CaptureOptions)
    case demo(CaptureOptions)
    case play(PlayOptions)
    case latency(LatencyOptions)
    case denoise(DenoiseOptions)
    case report(ReportOptions)
    case completions(Shell)
    case manual
    case ports(PortsOptions)
    /// `mark [LABEL]`, `pause`, `resume`, `stop`, `status`: the line to send, and to whom.
    case control(ControlOptions)
    /// Print this text (a help page) and exit 0.
    case help(String)
    case version

    /// Parses `micmon COMMAND [arguments]` (the arguments after the program name).
    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .help(HelpText.main) }
        if first == "-h" || first == "--help" || first == "help" { return .help(HelpText.main) }
        if first == "--version" { return .version }
        guard let name = CommandName(rawValue: first) else {
            let names = CommandTable.visibleCommands.map(\.name.rawValue).joined(separator: ", ")
            throw UsageError("unknown command '\(first)' (commands: \(names); see micmon --help)")
        }
        let spec = name.spec
        let scanned: ScannedArguments
        switch try OptionScanner.scan(Array(arguments.dropFirst()), by: spec) {
        case .help: return .help(HelpText.page(spec))
        case .version: return .version
        case .arguments(let arguments): scanned = arguments
        }
        switch name {
        case .meter: return .meter(try CaptureOptions(.meter, scanned))
        case .record: return .record(try CaptureOptions(.record, scanned))
        case .monitor: return .monitor(try CaptureOptions(.monitor, scanned))
        case .demo: return .demo(try CaptureOptions(.demo, scanned))
        case .play: return .play(try PlayOptions(scanned))
        case .latency: return .latency(try LatencyOptions(scanned))
        case .denoise: return .denoise(try DenoiseOptions(scanned))
        case .report: return .report(try ReportOptions(scanned))
        case .completions:
            guard scanned.positionals.count == 1, let shell = Shell(rawValue: scanned.positionals[0]) else {
                throw UsageError("completions needs one SHELL: bash, zsh or fish (see micmon completions --help)")
            }
            return .completions(shell)
        case .manual:
            try expectNoPositionals(scanned, name)
            return .manual
        case .ports:
            try expectNoPositionals(scanned, name)
            return .ports(
                PortsOptions(
                    output: scanned.isSet("output"), input: scanned.isSet("input"),
                    serverName: scanned.last("server")))
        case .mark, .pause, .resume, .stop, .status:
            return .control(try ControlOptions(name, scanned))
        }
    }

    static func expectNoPositionals(_ scanned: ScannedArguments, _ name: CommandName) throws(UsageError) {
        if let extra = scanned.positionals.first {
            throw UsageError("unexpected argument '\(extra)' for micmon \(name.rawValue)")
        }
    }
}

/// Converters from option text to checked values; each error names the option.
enum OptionValue {
    /// `--label primary,reference`: a name per input; an empty one (`,reference`) keeps the port's.
    static func labels(_ text: String) throws(UsageError) -> [String?] {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.isEmpty ? nil : String($0) }
        if names.allSatisfy({ $0 == nil }) {
            throw UsageError("--label needs names separated by commas, e.g. --label primary,reference")
        }
        return names
    }

    /// `--meter`: one of the standard meters; anything else exits 64 with the list.
    static func meterType(_ text: String) throws(UsageError) -> MeterType {
        guard let type = MeterType(rawValue: text) else {
            let names = MeterType.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("unknown --meter '\(text)' (\(names))")
        }
        return type
    }

    /// A session's `--loudness-mode`: as `loudnessMode`, or `off` (nil: no analysis thread).
    static func sessionLoudnessMode(_ text: String) throws(UsageError) -> LoudnessMode? {
        if text == "off" { return nil }
        guard let mode = LoudnessMode(rawValue: text) else {
            let names = (LoudnessMode.allCases.map(\.rawValue) + ["off"]).joined(separator: ", ")
            throw UsageError("unknown --loudness-mode '\(text)' (\(names))")
        }
        return mode
    }

    /// `--loudness-mode`: per-channel, dual-mono or stereo; anything else exits 64 with the list.
    static func loudnessMode(_ text: String) throws(UsageError) -> LoudnessMode {
        guard let mode = LoudnessMode(rawValue: text) else {
            let names = LoudnessMode.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("unknown --loudness-mode '\(text)' (\(names))")
        }
        return mode
    }

    /// `--denoise-latency standard|low`.
    static func denoiseLatency(_ text: String) throws(UsageError) -> NoiseSuppressorLatency {
        guard let latency = NoiseSuppressorLatency(rawValue: text) else {
            throw UsageError("--denoise-latency needs standard or low, not '\(text)'")
        }
        return latency
    }

    /// A client name JACK can take (JACK's own limit, `jack_client_name_size`), else exit 64
    /// with JACK's reason: libjack would fail the open as if no server ran.
    static func clientName(_ text: String) throws(UsageError) -> String {
        if text.isEmpty { throw UsageError("--name needs a non-empty client name") }
        if let problem = JackClient.nameProblem(text) {
            throw UsageError("--name '\(text)' cannot be a JACK client name: " + problem)
        }
        return text
    }

    /// The container from `--format`, else from the path's extension (one micmon does not
    /// know is refused), else WAV; the encoding from `--bits`, else float (24-bit for FLAC,
    /// which has no float; a lossy codec's own); `--quality` and `--bitrate-mode` only where
    /// the codec takes them. Checked with libsndfile.
    static func format(
        path: String, formatName: String?, bitsName: String?, quality: Double? = nil, bitrateModeName: String? = nil
    ) throws(UsageError) -> AudioFileFormat {
        let known = ContainerFormat.allCases.map(\.rawValue).joined(separator: ", ")
        let container: ContainerFormat
        if let formatName {
            guard let chosen = ContainerFormat(rawValue: formatName.lowercased()) else {
                throw UsageError("unknown --format '\(formatName)' (\(known))")
            }
            container = chosen
        } else if let byExtension = ContainerFormat(fileExtensionOf: path) {
            container = byExtension
        } else if let unknown = ContainerFormat.fileExtension(of: path) {
            throw UsageError(
                "\(path): .\(unknown) is not a format micmon writes (\(known)); "
                    + "give --format F or a name that ends in one of those")
        } else {
            container = .wav
        }
        let bitrateMode = try bitrateModeName.map { name throws(UsageError) in
            guard let mode = BitrateMode(rawValue: name.lowercased()) else {
                throw UsageError("unknown --bitrate-mode '\(name)' (cbr, vbr)")
            }
            return mode
        }
        if container.isLossy {
            if bitsName != nil {
                throw UsageError("--bits does not apply to \(container.rawValue) (its codec sets the encoding)")
            }
            if bitrateMode != nil && !container.hasBitrateMode {
                throw UsageError("--bitrate-mode applies only to mp3 (libsndfile's \(container.rawValue) has none)")
            }
            return AudioFileFormat(container: container, encoding: .float, quality: quality, bitrateMode: bitrateMode)
        }
        if quality != nil || bitrateMode != nil {
            throw UsageError("--quality and --bitrate-mode apply only to ogg, opus and mp3")
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
            let samples = encoding == .float ? "float" : "\(encoding.bitDepth)-bit"
            throw UsageError(
                "\(container.rawValue) cannot hold \(samples) samples (libsndfile refuses the combination); "
                    + "try --bits 24")
        }
        return format
    }
}

/// `mark [LABEL]`, `pause`, `resume`, `stop`, `status`: a command line for a recorder's socket.
struct ControlOptions: Equatable, Sendable {
    /// The line sent ("mark take two", "pause").
    var line: String
    /// `-n`: the recorder's socket name; nil picks the only one.
    var recorderName: String?

    init(_ name: CommandName, _ scanned: ScannedArguments) throws(UsageError) {
        recorderName = scanned.last("name")
        if name == .mark {
            let label = scanned.positionals.joined(separator: " ")
            if label.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw UsageError("a mark's LABEL is one line, without control characters")
            }
            line = label.isEmpty ? "mark" : "mark " + label
        } else {
            try Command.expectNoPositionals(scanned, name)
            line = name.rawValue
        }
        if let recorderName, recorderName.isEmpty || recorderName.contains("/") {
            throw UsageError("-n needs a recorder's name (its JACK client name), not '\(recorderName)'")
        }
    }
}

/// `meter`, `record`, `monitor` and `demo`: one capture session, checked before anything starts.
struct CaptureOptions: Equatable, Sendable {
    enum Kind: String, Equatable, Sendable { case meter, record, monitor, demo }

    var kind: Kind
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
    /// `--allow-unconnected`: no port fits the default rule, run unconnected anyway.
    var allowsUnconnected = false
    /// Monitoring (`monitor`, or `record --monitor`): destinations and gain.
    var monitors = false
    var monitorDestinations: [String] = []
    var monitorGainDecibels = 0.0
    /// `--denoise`: dual-mic noise suppression (in_1 primary, in_2 reference).
    var denoises = false
    /// `--denoise-latency`: the suppressor's delay.
    var denoiseLatency: NoiseSuppressorLatency = .standard
    /// `--channels`: what a denoised recording holds.
    var recordedChannels: CaptureConfiguration.RecordedChannels = .all
    /// `--label`: the screen's name for each input, in order; nil keeps the port's.
    var labels: [String?] = []
    /// `--loudness-mode`: which channels are measured together for loudness.
    /// nil: `off`, no loudness, true peak or standard meter (no analysis thread).
    var loudnessMode: LoudnessMode? = .perChannel
    /// `--meter`: the standard meter the inputs are read with.
    var meterType: MeterType = .peak
    /// `record --report`: at the end, FILE.report.svg and FILE.report.json beside the take.
    var writesReport = false
    /// `record`: retention, the disk guard and hooks (`OperationsOptions.swift`).
    var operations = OperationsOptions()
    /// `record --pre-roll`, `--trigger` (with `--trigger-off`, `--hang`, `--trigger-channel`),
    /// `--split`, `--split-on-clock`: how the recording is cut into files.
    var rotation = TakeRotation()
    /// `record --description`: the take's description (bext and sidecar).
    var takeDescription = ""
    /// `record --transport` / `--transport-split`: follow the JACK transport.
    var transportMode: TransportMode?
    /// `record -`: the take goes to stdout.
    var streamsToStandardOutput: Bool { kind == .record && filePath == "-" }

    enum TransportMode: Equatable, Sendable {
        /// Written while the transport rolls, paused while it does not.
        case pause
        /// The same, and each time it rolls again a new file begins.
        case split
    }

    init(kind: Kind) {
        self.kind = kind
        monitors = kind == .monitor
    }

    init(_ kind: Kind, _ scanned: ScannedArguments) throws(UsageError) {
        self.init(kind: kind)
        clientName = try scanned.last("name", OptionValue.clientName) ?? clientName
        serverName = scanned.last("server")
        ports = scanned.values("port")
        json = scanned.isSet("json")
        force = scanned.isSet("force")
        waitsForServer = scanned.isSet("wait-server")
        allowsUnconnected = scanned.isSet("allow-unconnected")
        durationSeconds = try scanned.number("duration")
        monitors = monitors || scanned.isSet("monitor")
        monitorDestinations = scanned.values("output")
        monitorGainDecibels = try scanned.number("gain") ?? 0
        denoises = scanned.isSet("denoise")
        let latency = try scanned.last("denoise-latency", OptionValue.denoiseLatency)
        denoiseLatency = latency ?? .standard
        let channels = try scanned.last("channels") { text throws(UsageError) in
            guard let channels = CaptureConfiguration.RecordedChannels(rawValue: text) else {
                throw UsageError("--channels needs raw, clean or all, not '\(text)'")
            }
            return channels
        }
        recordedChannels = channels ?? .all
        labels = try scanned.last("label", OptionValue.labels) ?? []
        let loudness = try scanned.last("loudness-mode", OptionValue.sessionLoudnessMode)
        loudnessMode = loudness ?? .perChannel
        writesReport = scanned.isSet("report")
        meterType = try scanned.last("meter", OptionValue.meterType) ?? .peak
        if loudnessMode == nil && meterType != .peak {
            throw UsageError(
                "--meter \(meterType.rawValue) runs on the analysis thread, which --loudness-mode off turns off")
        }
        if loudnessMode == nil && writesReport {
            throw UsageError("--report needs the take's analysis, which --loudness-mode off turns off")
        }
        operations = try OperationsOptions(scanned)
        takeDescription = scanned.last("description") ?? ""
        if takeDescription.utf8.count > BroadcastInfo.descriptionLimit {
            throw UsageError(
                "--description holds at most \(BroadcastInfo.descriptionLimit) bytes, got \(takeDescription.utf8.count)"
            )
        }

        let positional = scanned.positionals
        switch kind {
        case .record:
            guard let path = positional.first else {
                throw UsageError("record needs a FILE to write (see micmon record --help)")
            }
            guard positional.count == 1 else {
                throw UsageError("record takes one FILE, got: \(positional.joined(separator: " "))")
            }
            filePath = path
        case .demo:
            filePath = scanned.last("record")
            fallthrough
        case .meter, .monitor:
            if let extra = positional.first {
                throw UsageError("unexpected argument '\(extra)' for micmon \(kind.rawValue)")
            }
        }
        let formatName = scanned.last("format")
        let bitsName = scanned.last("bits")
        let quality = try scanned.number("quality")
        let bitrateModeName = scanned.last("bitrate-mode")
        if kind == .record && filePath == "-" {
            // stdout: a container whose header needs no seek; AU unless --format says FLAC.
            format = try OptionValue.format(
                path: "-.au", formatName: formatName, bitsName: bitsName, quality: quality,
                bitrateModeName: bitrateModeName)
            if let format, !format.container.streams {
                throw UsageError(
                    "record - writes to a pipe, which cannot seek: --format au or flac, not \(format.container.rawValue)"
                )
            }
            if waitsForServer { throw UsageError("--wait-server needs a FILE to continue into, not stdout (-)") }
            if writesReport { throw UsageError("--report needs a FILE to write beside, not stdout (-)") }
        } else if let path = filePath {
            format = try OptionValue.format(
                path: path, formatName: formatName, bitsName: bitsName, quality: quality,
                bitrateModeName: bitrateModeName)
        } else if formatName != nil || bitsName != nil || force || quality != nil || bitrateModeName != nil {
            throw UsageError(CommandTable.recordingOnly)
        }
        if scanned.isSet("transport") && scanned.isSet("transport-split") {
            throw UsageError("--transport and --transport-split: give one (--transport-split also pauses)")
        }
        if scanned.isSet("transport-split") {
            transportMode = .split
        } else if scanned.isSet("transport") {
            transportMode = .pause
        }
        if channels != nil && (!denoises || filePath == nil) {
            throw UsageError("--channels applies only when recording with --denoise")
        }
        if latency != nil && !denoises {
            throw UsageError("--denoise-latency applies only with --denoise")
        }
        if !monitors && (!monitorDestinations.isEmpty || monitorGainDecibels != 0) {
            throw UsageError("-o and --gain apply only when monitoring (micmon monitor, or record --monitor)")
        }
        if kind == .record { rotation = try OptionValue.rotation(scanned, path: filePath ?? "") }
        if transportMode == .split { rotation.splitsOnRequest = true }
        if streamsToStandardOutput && rotation.writesSeveralFiles {
            throw UsageError(
                "record - is one stream: --split, --trigger and --transport-split need a FILE, not stdout (-)")
        }
        if writesReport && rotation.writesSeveralFiles {
            throw UsageError("--report applies to a single take, not with --split or --trigger")
        }
    }
}

extension OptionValue {
    /// `--split` and the like: `30s`, `15m`, `1h`, `2d`, or plain seconds (`1.5`).
    static func duration(_ text: String, option: String) throws(UsageError) -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var number = Substring(text)
        var scale = 1.0
        for (suffix, seconds) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = seconds
            break
        }
        guard !number.isEmpty, number.allSatisfy({ "0123456789.".contains($0) }), let value = Double(number) else {
            throw UsageError("\(option) needs a duration such as 30s, 15m or 1h, not '\(text)'")
        }
        let seconds = value * scale
        guard CommandTable.splitRange.contains(seconds) else {
            throw UsageError(
                "\(option) needs a duration from 1 s to 31 days, not '\(text)'")
        }
        return seconds
    }

    /// The rotation options of `record`, checked together.
    static func rotation(_ scanned: ScannedArguments, path: String) throws(UsageError) -> TakeRotation {
        var rotation = TakeRotation()
        rotation.preRollSeconds = try scanned.number("pre-roll") ?? 0
        let on = try scanned.number("trigger")
        let off = try scanned.number("trigger-off")
        let hang = try scanned.number("hang")
        let channel = try scanned.number("trigger-channel")
        if let on {
            if let off, off > on {
                throw UsageError(
                    "--trigger-off (\(NumberRange.plain(off)) dB) must not be above --trigger (\(NumberRange.plain(on)) dB)"
                )
            }
            rotation.trigger = LevelTrigger(
                onDecibels: on, offDecibels: off, hangSeconds: hang ?? 3, channel: channel.map { Int($0) - 1 })
        } else if off != nil || hang != nil || channel != nil {
            throw UsageError("--trigger-off, --hang and --trigger-channel apply only with --trigger")
        }
        rotation.splitSeconds = try scanned.last("split") { text throws(UsageError) in
            try duration(text, option: "--split")
        }
        rotation.splitsOnClock = scanned.isSet("split-on-clock")
        if let split = rotation.splitSeconds {
            if rotation.splitsOnClock {
                let perDay = 86400 / split
                guard
                    (split >= 86400 && split.truncatingRemainder(dividingBy: 86400) == 0)
                        || (perDay.rounded() == perDay)
                else {
                    throw UsageError(
                        "--split-on-clock needs a --split that divides a day (1s, 30s, 15m, 1h, ...), not \(NumberRange.plain(split)) s"
                    )
                }
            }
            if !FilePattern(path).hasTimeFields {
                throw UsageError(
                    "with --split, FILE must hold a time field (such as rec-%Y%m%d-%H%M%S.wav): '\(path)' would name every file the same"
                )
            }
        } else if rotation.splitsOnClock {
            throw UsageError("--split-on-clock applies only with --split")
        }
        return rotation
    }
}

/// `latency`.
struct LatencyOptions: Equatable, Sendable {
    var clientName = "micmon"
    var serverName: String?
    var json = false
    var durationSeconds: Double?
    /// Where out_1 goes, what feeds in_1, or out_1 straight into in_1.
    var sendPort: String?
    var returnPort: String?
    var softwareLoop = false

    init() {}

    init(_ scanned: ScannedArguments) throws(UsageError) {
        clientName = try scanned.last("name", OptionValue.clientName) ?? clientName
        serverName = scanned.last("server")
        json = scanned.isSet("json")
        durationSeconds = try scanned.number("duration")
        sendPort = scanned.last("send")
        returnPort = scanned.last("return")
        softwareLoop = scanned.isSet("software-loop")
        if let extra = scanned.positionals.first {
            throw UsageError("unexpected argument '\(extra)' for micmon latency")
        }
        if returnPort != nil && softwareLoop {
            throw UsageError("--return and --software-loop both feed in_1; give one of them")
        }
    }
}

/// `play FILE`.
struct PlayOptions: Equatable, Sendable {
    var path = ""
    var clientName = "micmon"
    var serverName: String?
    /// `-o` requests (exact names or patterns); empty means the default rule's first two ports.
    var destinations: [String] = []
    var volume = 1.0
    var pan = 0.0
    var loops = 0
    var rate = 1.0
    var onRouteLoss = PlaybackConfiguration.RouteLossAction.pause
    var json = false
    /// `--allow-unconnected`: no port fits the default rule, play to nothing anyway.
    var allowsUnconnected = false

    init() {}

    init(_ scanned: ScannedArguments) throws(UsageError) {
        clientName = try scanned.last("name", OptionValue.clientName) ?? clientName
        serverName = scanned.last("server")
        destinations = scanned.values("output")
        json = scanned.isSet("json")
        allowsUnconnected = scanned.isSet("allow-unconnected")
        volume = try scanned.number("volume") ?? volume
        pan = try scanned.number("pan") ?? pan
        rate = try scanned.number("rate") ?? rate
        loops = try scanned.number("loops").map { Int($0) } ?? loops
        onRouteLoss =
            try scanned.last("on-route-loss") { text throws(UsageError) in
                guard let action = PlaybackConfiguration.RouteLossAction(rawValue: text) else {
                    throw UsageError("--on-route-loss takes pause or stop, not '\(text)'")
                }
                return action
            } ?? onRouteLoss
        let positional = scanned.positionals
        guard let first = positional.first else { throw UsageError("play needs a FILE (see micmon play --help)") }
        guard positional.count == 1 else {
            throw UsageError("play takes one FILE, got: \(positional.joined(separator: " "))")
        }
        path = first
    }

    /// What the playback session is given.
    var configuration: PlaybackConfiguration {
        var configuration = PlaybackConfiguration()
        configuration.clientName = clientName
        configuration.serverName = serverName
        configuration.path = path
        configuration.destinations = destinations
        configuration.volume = volume
        configuration.pan = pan
        configuration.loops = loops
        configuration.rate = rate
        configuration.onRouteLoss = onRouteLoss
        configuration.allowsUnconnected = allowsUnconnected
        return configuration
    }
}

/// `denoise IN OUT`.
struct DenoiseOptions: Equatable, Sendable {
    var inputPath = ""
    var outputPath = ""
    var blockFrames = 256
    /// `--denoise-latency`: the suppressor's delay, as live.
    var latency: NoiseSuppressorLatency = .standard
    var format = AudioFileFormat(container: .wav, encoding: .float)
    var force = false

    init() {}

    init(_ scanned: ScannedArguments) throws(UsageError) {
        force = scanned.isSet("force")
        blockFrames = try scanned.number("block").map { Int($0) } ?? blockFrames
        latency = try scanned.last("denoise-latency", OptionValue.denoiseLatency) ?? .standard
        guard scanned.positionals.count == 2 else {
            throw UsageError("denoise needs IN and OUT files (see micmon denoise --help)")
        }
        inputPath = scanned.positionals[0]
        outputPath = scanned.positionals[1]
        format = try OptionValue.format(
            path: outputPath, formatName: scanned.last("format"), bitsName: scanned.last("bits"),
            quality: try scanned.number("quality"), bitrateModeName: scanned.last("bitrate-mode"))
    }
}

/// `ports`: which of the server's ports to print.
struct PortsOptions: Equatable, Sendable {
    var output = false
    var input = false
    var serverName: String?
}

/// `report FILE...`.
struct ReportOptions: Equatable, Sendable {
    var paths: [String] = []
    var json = false
    var svgPath: String?
    var loudnessMode: LoudnessMode = .perChannel

    init() {}

    init(_ scanned: ScannedArguments) throws(UsageError) {
        paths = scanned.positionals
        json = scanned.isSet("json")
        svgPath = scanned.last("svg")
        loudnessMode = try scanned.last("loudness-mode", OptionValue.loudnessMode) ?? .perChannel
        guard !paths.isEmpty else { throw UsageError("report needs a FILE to read (see micmon report --help)") }
        if svgPath != nil && paths.count != 1 {
            throw UsageError("--svg draws one FILE; got \(paths.count)")
        }
        if let svgPath, svgPath.isEmpty { throw UsageError("--svg needs a file name") }
    }
}
