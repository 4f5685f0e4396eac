// A capture session (`micmon meter`, `record`, `monitor`): the session core with the capture
// kernel plugged in, the writer thread, the route watch, and the summary. Its configuration,
// errors and summary types. Main thread only.

import DSP
import Jack
import Loudness
import Platform
import Realtime
import SoundFile

/// What a capture session should do. Plain values, checked by the caller.
public struct CaptureConfiguration: Sendable {
    /// Where and how to record; nil meters only.
    public struct Recording: Sendable {
        public var path: String
        public var format: AudioFileFormat
        /// `--force`: what is at `path` (a regular file or a symbolic link) is replaced by the new
        /// file; without it anything there is refused (`SoundFileWriter`).
        public var replacesExisting: Bool
        /// What the file's `bext` and sidecar say beside the take's own facts (`--description`).
        public var metadata = TakeMetadataOptions()
        /// Whether FILE.json is written beside the file (every take from the command line).
        public var writesSidecar = true
        /// Stream the take to this descriptor (`record -`: stdout, a pipe) instead of a file at
        /// `path` (which then only names it): no crash-safe intermediate, no header rewrites.
        public var streamDescriptor: Int32?
        public init(
            path: String, format: AudioFileFormat, replacesExisting: Bool = false, streamDescriptor: Int32? = nil
        ) {
            self.streamDescriptor = streamDescriptor
            self.path = path
            self.format = format
            self.replacesExisting = replacesExisting
        }
    }

    public var clientName = "micmon"
    public var serverName: String?
    /// `-p` requests in order (exact names or patterns); empty means the first two ports of the
    /// default rule (`PortSelection.defaults`).
    public var sourcePorts: [String] = []
    /// `--allow-unconnected`: with no `-p` (or `-o`) and no port the default rule accepts, run
    /// with the inputs (outputs) connected to nothing instead of refusing to start.
    public var allowsUnconnected = false
    /// Inputs to register even when fewer sources are given (in_1, in_2).
    public var minimumChannelCount = 2
    public var recording: Recording?
    /// Stop after this many seconds (the take then holds exactly seconds × rate frames).
    public var durationSeconds: Double?
    /// Capacity of the capture ring, in seconds of audio.
    public var ringSeconds: Double = 4
    /// Monitoring: the inputs on `out_1`, `out_2` in the same cycle, or nil.
    public var monitor: Monitoring?
    /// Dual-mic noise suppression: in_1 is the primary mic, in_2 the reference. The clean
    /// channel is metered, monitored instead of the inputs, and recorded as `recordedChannels`
    /// says.
    public var denoises = false
    /// The suppressor's delay (`--denoise-latency`). Ignored without `denoises`.
    public var denoiseLatency: NoiseSuppressorLatency = .standard
    /// What the file holds when denoising: the inputs, the clean channel, or all (inputs, then
    /// clean). Ignored without `denoises`.
    public var recordedChannels: RecordedChannels = .all
    /// Loudness, true peak, statistics and correlation of the recorded channels on the analysis
    /// thread, measured as this mode says; nil analyses nothing (and costs the realtime thread
    /// nothing).
    public var loudnessMode: LoudnessMode? = .perChannel
    /// The standard meter over the inputs (`--meter`); `peak` runs none beside micmon's own.
    public var meterType: MeterType = .peak
    /// Keep the level and loudness envelopes for a picture of the take (`record --report`).
    public var keepsAnalysisEnvelope = false
    /// How the recording is cut into files (pre-roll, level trigger, splits); FILE is then a
    /// pattern (`FilePattern`) whose names are never overwritten (a number is added).
    public var rotation = TakeRotation()
    /// Requests to the running take (`TakeRequest(.split)` is applied by the writer), or nil.
    public var control: TakeControl?
    /// Told about each file once it is finalized (closed, converted), on the finisher's thread.
    public var onFileClosed: (@Sendable (ClosedTakeFile) -> Void)?
    /// The names the run's earlier takes gave their files (`--wait-server`: one take a server),
    /// never given again; nil: the take is the run's first.
    public var fileNames: TakeFileNames?

    /// The most memory a session's capture buffers may take (`bufferBytes`): 256 MiB. It holds
    /// 64 channels at 96 kHz or 16 channels at 192 kHz with room to spare (docs/recording.md);
    /// a session that would need more is refused before anything is created.
    public static let bufferMemoryCap = 256 << 20

    /// Bytes of the buffers a session with these settings allocates, all sized from
    /// channels × rate × seconds: the capture ring (when recording) and the analysis ring (when
    /// analysing), each `ringSeconds` × rate frames (at least 8192) of `channels` floats, and the
    /// writer's block of silence (4096 frames).
    public static func bufferBytes(
        channels: Int, sampleRate: Int, ringSeconds: Double, records: Bool, analyses: Bool
    ) -> Int {
        let ringFrames = max(Int(ringSeconds * Double(sampleRate)), 8192)
        let rings = (records ? 1 : 0) + (analyses ? 1 : 0)
        let floats = rings * ringFrames * channels + (records ? TakeWriter.silenceFrames * channels : 0)
        return floats * MemoryLayout<Float>.stride
    }

    public enum RecordedChannels: String, Sendable, CaseIterable {
        case raw, clean, all
    }

    public struct Monitoring: Sendable {
        /// `-o` requests (exact names or patterns); empty means the first two physical
        /// playback ports.
        public var destinations: [String]
        public var gainDecibels: Double
        public init(destinations: [String] = [], gainDecibels: Double = 0) {
            self.destinations = destinations
            self.gainDecibels = gainDecibels
        }
    }

    public init() {}
}

/// Why a session could not start. The messages come from libjack / libsndfile.
public enum CaptureError: Error, CustomStringConvertible {
    case jack(JackError)
    case unknownPort(PortSelection.NoMatch)
    /// No `-p` (or `-o`) and no port the default rule accepts, without `--allow-unconnected`.
    case noDefaultPorts(PortSelection.NoDefault)
    case file(SoundFileError)
    case denoise(NoiseSuppressorError)
    case loudness(LoudnessError)
    /// The buffers would take more than `CaptureConfiguration.bufferMemoryCap`.
    case buffersTooLarge(bytes: Int, channels: Int, sampleRate: Int)
    /// The server has no room for the inputs (`jack_port_register` failed: its port table, jackd's
    /// `--port-max`, is full).
    case noRoomForPorts(wanted: Int, registered: Int, server: String)

    /// A setting that does not fit what the session found (e.g. `--trigger-channel` past the inputs).
    case setting(String)

    public var description: String {
        switch self {
        case .setting(let text): return text
        case .buffersTooLarge(let bytes, let channels, let sampleRate):
            let mebibytes = (bytes + (1 << 20) - 1) >> 20
            return
                "\(channels) channels at \(sampleRate) Hz need \(mebibytes) MiB of buffers, over micmon's cap of "
                + "\(CaptureConfiguration.bufferMemoryCap >> 20) MiB (docs/recording.md); record fewer channels"
        case .noRoomForPorts(let wanted, let registered, let server):
            return
                "the JACK server '\(server)' has room for only \(registered) of the \(wanted) inputs asked for "
                + "(its port table is full: jackd --port-max); ask for fewer ports"
        case .loudness(let error): return error.description
        case .denoise(let error): return error.description
        case .jack(let error): return error.description
        case .unknownPort(let error): return error.description
        case .noDefaultPorts(let error): return error.description
        case .file(let error): return error.description
        }
    }
}

/// The end of a session, for the summary and the exit code.
public struct CaptureSummary: Sendable {
    public let sampleRate: Int
    public let channelNames: [String]
    public let sourcePorts: [String]
    /// Frames on the take's timeline (= frames in the file when recording).
    public let framesTaken: UInt64
    public let framesWritten: UInt64
    /// Frames written as silence: periods the ring could not take, and `framesMissed`.
    public let framesDropped: UInt64
    /// Graph-wide gaps (the driver itself was late: every client lost those cycles) and the
    /// frames they span. Not drops: nothing is written in their place.
    public let serverGapCount: UInt64
    public let framesSkippedByServer: UInt64
    /// Where those gaps fall in the take (the first `CaptureSession.serverGapListLimit`).
    public let serverGaps: [DropEvent]
    public let drops: [DropEvent]
    /// Xrun events (notifications within one period are one event).
    public let xruns: UInt64
    /// micmon's own timeline losses (`TimelineJudge`): the server's clock ran past micmon and
    /// did not give the frames back. Counted in `framesDropped` when recording (silence in their
    /// place). JACK does not say whether other clients got those frames (docs/timeline.md).
    public var missedGapCount: UInt64 = 0
    public var framesMissed: UInt64 = 0
    /// Where those losses fall in the take (the first `CaptureSession.serverGapListLimit`).
    public var missedGaps: [DropEvent] = []
    /// Late reads of the frame counter that netted out (+2N then +0): nothing lost.
    public var timelineJitter: UInt64 = 0
    /// Cycles micmon was given late (the next period early, then nothing new): each one a loss
    /// of micmon's own, counted in `missedGapCount` (docs/timeline.md).
    public var lateCycles: UInt64 = 0
    /// PipeWire only: runs of digital silence between sound that the graph may have given
    /// micmon alone (`CaptureKernel.noteSilentCycle`), their frames, and where they fall (the
    /// first `serverGapListLimit`). Non-zero means exit 75 (docs/timeline.md).
    public var uncertainGapCount: UInt64 = 0
    public var framesUncertain: UInt64 = 0
    public var uncertainGaps: [DropEvent] = []
    /// The raw xrun callbacks behind `xruns`.
    public var xrunCallbacks: UInt64 = 0
    public let readings: [MeterReading]
    public let fileError: SoundFileError?
    public let serverWasLost: Bool
    public let sampleRateChanged: Bool
    /// Lateness and execution time of the process callback over the session.
    public let callbackTiming: CallbackTimingSummary
    /// NaN and ±∞ samples monitoring sent to JACK as 0.
    public var monitorNonFiniteReplaced: UInt64 = 0
    /// The crash-safe intermediate (`TakeWriter.partialPath(for:)`) when the take went through
    /// one and it is still on disk (its conversion failed): it holds the take.
    public var partialPath: String?
    /// Take frames pauses left out of the file: the file holds `framesTaken - framesPaused`.
    public var framesPaused: UInt64 = 0
    /// With `--trigger`: take frames spent armed that no file holds (nil without a trigger). The
    /// files then hold `framesWritten`, not `framesTaken - framesPaused`.
    public var framesArmed: UInt64?
    /// The take went to a stream (`record -`), not a file.
    public var streamed = false
    /// The rate the server changed to when `sampleRateChanged` (0 otherwise).
    public var changedSampleRate = 0
    /// Inputs whose chosen source was never seen connected to them during the take ("in_1"),
    /// with that source: the input holds silence throughout.
    public var neverConnected: [(input: String, source: String)] = []
    /// The analysis of the recorded channels (loudness, true peak, statistics, correlation), or
    /// nil when none ran.
    public var analysis: TakeAnalysisResult?
    /// Frames the analysis missed (its ring was full): nonzero means `analysis` lacks them.
    public var analysisFramesMissed: UInt64 = 0
    /// The standard meter (`--meter`) and its last states, one per input (none with `peak`).
    public var meterType: MeterType = .peak
    public var ballisticReadings: [BallisticMeter] = []
    /// The files written, in the order they were finalized (the latest
    /// `TakeFileFinisher.listLimit`), and how many there were in all.
    public var files: [ClosedTakeFile] = []
    public var fileCount = 0
}

/// How PipeWire's JACK brings a new link up, as measured (docs/platforms.md).
enum PipeWireLink {
    /// Cycles, and seconds, to let pass after jack_connect returned before a take begins.
    static let settlingCycles: UInt64 = 4
    static let settlingSeconds = 0.1
}

/// A running capture: JACK client, realtime kernel, ring, writer thread and meters.
/// Create, `start()`, poll from the main thread, `stop()`. Main thread only.
public final class CaptureSession {
    public var client: JackClient { core.client }
    public let sampleRate: Int
    public let channelNames: [String]
    /// The source port feeding each input at the start ("" when an input has no source, or
    /// waits for its request to match a port).
    public let sourcePorts: [String]
    /// The `-p` request each input's source was chosen by; nil for the default ports and for
    /// inputs beyond the requests.
    public let sourceRequests: [String?]
    /// The source each input follows now: a waiting input's once its request matched, a
    /// pattern's new match after its source went away. Main thread.
    public var currentSources: [String] { routeWatch.sources }
    /// Things the user should know that are not errors (e.g. fewer capture ports than inputs).
    public private(set) var warnings: [String] = []
    public var isRecording: Bool { writer != nil }
    /// Whether the noise suppressor runs (the last meter reading is then the clean channel).
    public let denoises: Bool
    /// Where the monitor outputs go (out_1 first); empty without monitoring.
    public let monitorDestinations: [String]
    public let monitorPorts: [JackPort]

    private let core: JackSession<CaptureKernel>
    private let ports: [JackPort]
    private let parts: CaptureMemory
    private var counters: UnsafeMutablePointer<CaptureCounters> { parts.counters }
    private let writer: TakeWriter?
    private let analysis: AnalysisThread?
    /// The standard meter the inputs are read with (`peak`: micmon's own only).
    public let meterType: MeterType
    /// The names of the recorded (and analysed) channels, in order.
    public let recordedChannelNames: [String]
    private var serverGapLog: [DropEvent] = []
    private var missedLog: [DropEvent] = []
    private var uncertainLog: [DropEvent] = []
    /// How many server gaps the summary lists (all are counted), so memory stays flat.
    public static let serverGapListLimit = 1000
    private let routeWatch: RouteWatch
    /// Per input: whether its chosen source has been seen connected to it (true for an input
    /// without a source, which is never waited for).
    private var wasSeenConnected: [Bool] = []
    /// Callback lateness and execution time, folded on the main thread (see `drainTimings()`).
    public var callbackStatistics: CallbackStatistics { core.memory.callbackStatistics }
    private var summary: CaptureSummary?
    /// Test-only: the cycle trace and where it goes (`MICMON_TEST_CYCLE_TRACE`).
    private var cycleTrace: (UnsafeMutablePointer<CycleTrace>, String)?
    /// Every event of the run on the take's timeline (triggers, splits, ...).
    public let events: TakeEventLog
    private let hasTrigger: Bool
    /// A rotation or trigger run: FILE is a pattern and the summary lists the files.
    public let writesSeveralFiles: Bool
    /// Requests to the running take (pause, resume, mark, split): post from any thread but the
    /// realtime one, at `framesTaken` (`configuration.control` when given, else its own).
    public let control: TakeControl
    private let metadata: TakeMetadata?
    /// The handle keys, signals, the control socket and transport drive the take with.
    public let remote: TakeRemote

    /// Connects to the server, registers the inputs, resolves the sources, creates the file and
    /// prepares all realtime memory. Nothing runs until `start()`.
    public init(_ configuration: CaptureConfiguration) throws(CaptureError) {
        do {
            core = try JackSession(clientName: configuration.clientName, serverName: configuration.serverName)
        } catch {
            throw .jack(error)
        }
        let sampleRate = core.sampleRate
        self.sampleRate = sampleRate
        streams = configuration.recording?.streamDescriptor != nil
        let suppressor: NoiseSuppressor?
        if configuration.denoises {
            do { suppressor = try NoiseSuppressor(sampleRate: sampleRate, latency: configuration.denoiseLatency) } catch
            { throw .denoise(error) }
        } else {
            suppressor = nil
        }
        denoises = suppressor != nil

        let catalog = core.portCatalog()
        let wanted = configuration.minimumChannelCount
        var sources: [String]
        var requestOfInput: [Int?]
        do {
            if configuration.sourcePorts.isEmpty {
                sources = try PortSelection.choose([], direction: .output, defaultCount: wanted, in: catalog)
                requestOfInput = sources.map { _ in nil }
            } else {
                // With --allow-unconnected a request that matches nothing yet holds an input
                // that waits for it (the route watch connects it when a port matches).
                let resolution = try PortSelection.resolveWaiting(
                    configuration.sourcePorts, among: catalog.outputs, kind: "output",
                    waitsForMissing: configuration.allowsUnconnected)
                sources = resolution.ports
                requestOfInput = resolution.requestOfInput
                for input in resolution.waitingInputs {
                    let request = configuration.sourcePorts[resolution.requestOfInput[input]]
                    warnings.append(
                        "no JACK output port matches '\(request)' yet; in_\(input + 1) reads silence until one does")
                }
            }
        } catch {
            throw .unknownPort(error)
        }
        if configuration.sourcePorts.isEmpty && sources.isEmpty && !configuration.allowsUnconnected {
            throw .noDefaultPorts(PortSelection.NoDefault(direction: .output, candidates: catalog.outputs))
        }
        if configuration.sourcePorts.isEmpty && PortSelection.defaults(.output, in: catalog).rule == .named {
            warnings.append(
                "no physical capture port; taking the outputs named *:capture_*: \(sources.joined(separator: ", "))")
        }
        if configuration.sourcePorts.isEmpty && !sources.isEmpty && sources.count < wanted {
            warnings.append(
                "found \(sources.count) capture port(s) for \(wanted) inputs; the rest read silence (use -p to choose sources)"
            )
        }
        let channelCount = max(wanted, sources.count)
        requestOfInput += Array(repeating: nil, count: channelCount - sources.count)
        sources += Array(repeating: "", count: channelCount - sources.count)
        sourcePorts = sources
        sourceRequests = requestOfInput.map { $0.map { configuration.sourcePorts[$0] } }

        let recordedCount: Int
        switch suppressor == nil ? .raw : configuration.recordedChannels {
        case .raw: recordedCount = channelCount
        case .clean: recordedCount = 1
        case .all: recordedCount = channelCount + 1
        }
        let bytes = CaptureConfiguration.bufferBytes(
            channels: recordedCount, sampleRate: sampleRate, ringSeconds: configuration.ringSeconds,
            records: configuration.recording != nil, analyses: configuration.loudnessMode != nil)
        if bytes > CaptureConfiguration.bufferMemoryCap {
            throw .buffersTooLarge(bytes: bytes, channels: recordedCount, sampleRate: sampleRate)
        }
        do { ports = try core.registerPorts("in", count: channelCount, direction: .input) } catch {
            if case .portRegistrationFailed = error {
                throw .noRoomForPorts(
                    wanted: channelCount, registered: core.registeredPortCount,
                    server: configuration.serverName ?? JackClient.defaultServerName)
            }
            throw .jack(error)
        }
        channelNames = ports.map(\.shortName) + (suppressor == nil ? [] : ["clean"])

        var plan = CaptureMemory.Plan(
            sampleRate: sampleRate, inputPorts: ports.map(\.handle), suppressor: suppressor,
            recordedChannels: configuration.recordedChannels)
        if JackClient.isPipeWire {
            // Before activation PipeWire's libjack hands each input its own silent buffer: the one
            // a cycle gets when the port has no data (docs/timeline.md, "PipeWire").
            let frames = UInt32(CaptureKernel.maximumPeriod)
            plan.idleInputBuffers = ports.map { JackPortBuffer.idleBuffer($0.handle, frames: frames) }
        }
        if let monitor = configuration.monitor {
            let chosen: [String]
            do {
                chosen = try PortSelection.choose(monitor.destinations, direction: .input, defaultCount: 2, in: catalog)
            } catch {
                throw .unknownPort(error)
            }
            if monitor.destinations.isEmpty && chosen.isEmpty && !configuration.allowsUnconnected {
                throw .noDefaultPorts(PortSelection.NoDefault(direction: .input, candidates: catalog.inputs))
            }
            do { monitorPorts = try core.registerPorts("out", count: 2, direction: .output) } catch {
                throw .jack(error)
            }
            monitorDestinations = Array(chosen.prefix(2))
            plan.monitorPorts = monitorPorts.map(\.handle)
            plan.monitorGain = Float(Decibels.gain(decibels: monitor.gainDecibels))
        } else {
            monitorPorts = []
            monitorDestinations = []
        }
        if configuration.recording != nil {
            plan.ringFrames = max(Int(configuration.ringSeconds * Double(sampleRate)), 8192)
        }
        let recordedNames: [String]
        switch suppressor == nil ? .raw : configuration.recordedChannels {
        case .raw: recordedNames = Array(channelNames.prefix(channelCount))
        case .clean: recordedNames = ["clean"]
        case .all: recordedNames = channelNames
        }
        recordedChannelNames = recordedNames
        var analyzer: TakeAnalyzer?
        if let mode = configuration.loudnessMode {
            let fullScale = configuration.recording.map { FileAnalysis.fullScale(of: $0.format.encoding) } ?? 1
            do {
                analyzer = try TakeAnalyzer(
                    channelNames: recordedNames, sampleRate: sampleRate, mode: mode,
                    keepsEnvelope: configuration.keepsAnalysisEnvelope, fullScale: fullScale)
            } catch {
                throw .loudness(error)
            }
            plan.analysisRingFrames = max(Int(configuration.ringSeconds * Double(sampleRate)), 8192)
        }
        meterType = configuration.meterType
        plan.frameLimit = configuration.durationSeconds.map { UInt64(($0 * Double(sampleRate)).rounded()) } ?? .max

        events = TakeEventLog()
        control = configuration.control ?? TakeControl()
        hasTrigger = configuration.rotation.trigger != nil
        writesSeveralFiles = configuration.rotation.writesSeveralFiles
        var opener: TakeFileOpener?
        var firstFile: TakeFile?
        if let recording = configuration.recording {
            let channels: Int
            switch suppressor == nil ? .raw : configuration.recordedChannels {
            case .raw: channels = channelCount
            case .clean: channels = 1
            case .all: channels = channelCount + 1
            }
            if let watched = configuration.rotation.trigger?.channel, watched >= channels {
                throw .setting(
                    "--trigger-channel \(watched + 1): the file has \(channels) channel\(channels == 1 ? "" : "s")")
            }
            // Crash-safe: a take in a container that cannot survive a kill goes to
            // FILE.partial.w64 as the floats JACK delivered, converted into FILE at its close
            // exactly as a direct write would have been (`TakeFileOpener`).
            let files = TakeFileOpener(
                pattern: FilePattern(recording.path), format: recording.format, sampleRate: sampleRate,
                channelCount: channels, replacesExisting: recording.replacesExisting,
                numbersTakenNames: configuration.rotation.writesSeveralFiles,
                names: configuration.fileNames ?? TakeFileNames())
            opener = files
            do throws(SoundFileError) {
                if let descriptor = recording.streamDescriptor {
                    // A pipe: the take goes out as it comes, and a stream cannot be converted at
                    // the end, so no intermediate (`record -` refuses splits and triggers).
                    let stream = try SoundFileWriter(
                        streamingTo: descriptor, path: recording.path, format: recording.format,
                        sampleRate: sampleRate, channelCount: channels)
                    firstFile = TakeFile(path: recording.path, file: stream, final: nil, wallClock: CalendarTime.now())
                } else if configuration.rotation.trigger == nil {
                    firstFile = try files.open(at: CalendarTime.now())
                } else {
                    // The first file is made when the trigger fires; its name is checked now.
                    let name = try files.name(at: CalendarTime.now())
                    let folder = FileSystem.nearestExistingFolder(of: FileSystem.parentFolder(of: name))
                    if let problem = FileSystem.creationProblem(inFolder: folder) {
                        throw SoundFileError(.create, path: name, message: problem)
                    }
                }
            } catch {
                throw .file(error)
            }
        }

        parts = CaptureMemory(plan, memory: core.memory, link: core.link)
        if let recording = configuration.recording, opener != nil {
            let names = ports.map(\.shortName)
            let inputSources = sources
            let recordedSources = recordedNames.map { name in
                names.firstIndex(of: name).map { inputSources[$0] } ?? ""
            }
            let made = TakeMetadata(
                options: recording.metadata, sampleRate: sampleRate, channelNames: recordedNames,
                sourcePorts: recordedSources,
                events: events, counters: parts.counters)
            if recording.writesSidecar {
                do throws(SoundFileError) {
                    if let firstFile { try Self.startSidecar(made, recording: recording, path: firstFile.path) }
                } catch {
                    firstFile?.discard()
                    throw .file(error)
                }
            }
            metadata = recording.writesSidecar ? made : nil
        } else {
            metadata = nil
        }
        if let opener, let samples = parts.sampleRing, let drops = parts.dropRing {
            let stall = Environment.value("MICMON_TEST_WRITER_STALL_SECONDS").flatMap { Double($0) } ?? 0
            writer = TakeWriter(
                first: firstFile, opener: opener, rotation: configuration.rotation, sampleRate: sampleRate,
                samples: samples.consumer, drops: drops.consumer, serverGaps: parts.serverGapRing.consumer,
                counters: parts.counters, channelCount: parts.recordedChannelCount, control: control,
                events: events, metadata: metadata, onFileClosed: configuration.onFileClosed, stallSeconds: stall)
        } else {
            writer = nil
        }
        remote = TakeRemote(control: control, counters: parts.counters, writer: writer, sampleRate: sampleRate)
        if let analyzer, let ring = parts.analysisRing {
            analysis = AnalysisThread(analyzer: analyzer, samples: ring.consumer, meterType: configuration.meterType)
        } else {
            analysis = nil
        }
        routeWatch = RouteWatch(
            client: core.client, ports: ports, sources: sources,
            changes: core.memory.routeChangeRing.consumer,
            requests: configuration.sourcePorts, requestOfInput: requestOfInput)
        var kernel = parts.kernel
        kernel.plantsAllocation = Environment.isSet("MICMON_TEST_PLANT_RT_ALLOCATION", to: "1")
        if let path = Environment.value("MICMON_TEST_CYCLE_TRACE"), !path.isEmpty {
            // 65 536 cycles unless MICMON_TEST_CYCLE_TRACE_CYCLES asks for more (a long soak).
            let asked = Environment.value("MICMON_TEST_CYCLE_TRACE_CYCLES").flatMap { Int($0) } ?? 0
            let capacity = max(1 << 16, min(asked, 1 << 24))
            let entries = core.memory.make(repeating: CycleTraceEntry(), count: capacity)
            let trace = core.memory.make(CycleTrace(entries: entries, capacity: capacity))
            kernel.trace = trace
            cycleTrace = (trace, path)
        }
        do { try core.install(kernel, process: captureProcess) } catch { throw .jack(error) }
    }

    deinit {
        if core.isStarted && summary == nil { _ = stop() }
    }

    /// The sidecar before the take starts: refused when one is there without `--force` (it may
    /// belong to another take), and written once (no events yet), so a folder that takes the
    /// file but not the sidecar fails here, not at the first marker. Main thread.
    private static func startSidecar(
        _ metadata: TakeMetadata, recording: CaptureConfiguration.Recording, path filePath: String
    ) throws(SoundFileError) {
        let format = recording.format
        let path = TakeMetadata.sidecarPath(for: filePath)
        if !recording.replacesExisting, PathEntry(path: path, followingLinks: false) != nil {
            throw SoundFileError(
                .create, path: path, message: SystemError.fileExists.description,
                systemCode: SystemError.fileExists.code)
        }
        var file = TakeFileMetadata(
            path: filePath, format: format, firstTakeFrame: 0,
            codingHistory: metadata.codingHistory(format: format, channelCount: metadata.channelNames.count))
        metadata.writeSidecar(for: &file, timeline: FileTimeline(), final: false)
        if let error = file.sidecarError { throw SoundFileError(.create, path: path, message: error) }
    }

    /// Starts the writer, activates the client and connects the sources. A source that cannot be
    /// connected does not stop the take: it is named in `warnings`, the route watch keeps trying,
    /// and the summary lists it when it never was (`neverConnected`). Main thread.
    public func start() throws(CaptureError) {
        writer?.start()
        analysis?.start()
        do {
            try core.activate()
            for (source, port) in zip(sourcePorts, ports) where !source.isEmpty {
                do { try client.connect(source: source, destination: port.fullName) } catch {
                    warnings.append("\(error.description); \(port.shortName) reads silence until it can be connected")
                }
            }
            for (port, destination) in zip(monitorPorts, monitorDestinations) {
                try client.connect(source: port.fullName, destination: destination)
            }
            // A connection reaches the graph the realtime thread runs at a later cycle switch;
            // on a netjack2 master one input's came a period after another's, so the take
            // began with a period of silence on it. Arm once the graph shows every source
            // connected (bounded: a server that runs no cycle must not hold up the start).
            let wanted = zip(sourcePorts, ports).filter { !$0.0.isEmpty }
            _ = waitPolling(
                timeout: 1, interval: 0.002,
                until: { wanted.allSatisfy { client.connections(of: $0.1).contains($0.0) } })
            if JackClient.isPipeWire { awaitLiveLinks() }
            writer?.noteFirstFrame(wallClock: CalendarTime.now())
            if let metadata {
                let latencies = sourcePorts.filter { !$0.isEmpty }.compactMap {
                    client.latencyRange(ofPort: $0, mode: .capture)?.max
                }
                metadata.noteCaptureLatency(frames: latencies.max() ?? 0)
            }
            counters.pointee.isArmed.store(true, ordering: .relaxed)
        } catch {
            throw .jack(error)
        }
        noteConnections()
    }

    /// PipeWire's jack_connect returns once the link object exists, before the server has
    /// negotiated it and it carries data: the first periods after it can be silent on an input
    /// (on one of two, or both), which a take must not begin with. So the take is armed only after
    /// `PipeWireLink.settlingCycles` cycles and `settlingSeconds` have passed since the
    /// connections were made (bounded by a second, for a graph that runs no cycles). Main thread.
    private func awaitLiveLinks() {
        let start = core.memory.cycles
        let began = MonotonicClock.nanoseconds()
        _ = waitPolling(
            timeout: 1,
            until: {
                core.memory.cycles &- start >= PipeWireLink.settlingCycles
                    && Double(MonotonicClock.nanoseconds() &- began) / 1e9 >= PipeWireLink.settlingSeconds
            }, givingUpIf: { core.memory.serverIsGone })
    }

    /// Looks, for each input whose source has not been seen connected yet, whether it is now.
    /// Main thread; cheap once every input has been seen.
    private func noteConnections() {
        if wasSeenConnected.isEmpty {
            wasSeenConnected = zip(sourcePorts, sourceRequests).map { $0.isEmpty && $1 == nil }
        }
        let followed = routeWatch.sources
        for (index, port) in ports.enumerated() where !wasSeenConnected[index] && !followed[index].isEmpty {
            if client.connections(of: port).contains(followed[index]) { wasSeenConnected[index] = true }
        }
    }

    /// Route changes since the last call: sources gone, back (reconnected), or connections
    /// changed by someone else. Main thread, a few times a second.
    public func pollRoute() -> [RouteChange] {
        let changes = routeWatch.poll(takeSeconds: Double(framesTaken) / Double(sampleRate))
        noteConnections()
        return changes
    }

    /// Whether each input has a connection now (as of the last `pollRoute()`).
    public var inputIsConnected: [Bool] { routeWatch.isConnected }

    /// Folds the queued cycle timings into `callbackStatistics`, and takes the server gaps
    /// noted since. Main thread, a few times a second.
    public func drainTimings() {
        callbackStatistics.drain()
        drainServerGaps()
    }

    /// A recording's writer reads the server-gap log itself (each file learns the gaps within
    /// it before it closes); without one the gaps are taken here.
    private func drainServerGaps() {
        if writer == nil {
            Self.drain(parts.serverGapRing.consumer, into: &serverGapLog) { gap in
                events.append(TakeEvent(.serverGap, at: gap.startFrame, frameCount: gap.frameCount))
            }
        }
        Self.drain(parts.missedRing.consumer, into: &missedLog)
        Self.drain(parts.uncertainRing.consumer, into: &uncertainLog)
    }

    /// Moves what `consumer` holds onto `log` (up to `serverGapListLimit` entries), calling `each`
    /// for every event, kept or not. The ring's one consumer thread.
    static func drain(
        _ consumer: SPSCRing<DropEvent>.Consumer, into log: inout [DropEvent], each: (DropEvent) -> Void = { _ in }
    ) {
        let slices = consumer.readableSlices()
        guard slices.count > 0 else { return }
        for gap in slices.first {
            if log.count < serverGapListLimit { log.append(gap) }
            each(gap)
        }
        for gap in slices.second {
            if log.count < serverGapListLimit { log.append(gap) }
            each(gap)
        }
        consumer.commitRead(count: slices.count)
    }

    /// The latest monitor output meters (out_1, out_2); empty without monitoring. Main thread.
    public func monitorReadings() -> [MeterReading] {
        parts.monitorMailbox.map { $0.readLatest().0.map(\.reading) } ?? []
    }

    /// The latest meter readings, one per input. Main thread.
    public func readings() -> [MeterReading] {
        Array(parts.mailbox.readLatest().0.map(\.reading))
    }

    /// The latest loudness readings per programme and the running correlation (nil without
    /// analysis), as of the analysis thread's last publication: the analysis thread publishes
    /// them from the first call on, at each 100 ms hop (`AnalysisThread`). Main thread.
    public func loudnessReadings() -> (programmes: [ProgrammeLoudness], correlation: Double?)? {
        analysis?.readings()
    }

    /// The latest standard-meter states, one per recorded channel (empty with `--meter peak` or
    /// without analysis), as of the analysis thread's last pass. Main thread.
    public func ballisticReadings() -> [BallisticMeter] {
        analysis?.ballisticReadings() ?? []
    }

    /// CPU time the analysis thread has used so far, in nanoseconds (0 without analysis).
    public var analysisCPUNanoseconds: UInt64 { analysis?.cpuNanoseconds.load(ordering: .relaxed) ?? 0 }

    public var framesTaken: UInt64 { counters.pointee.framesTaken.load(ordering: .acquiring) }
    public var framesDropped: UInt64 { counters.pointee.framesDropped.load(ordering: .relaxed) }
    public var xruns: UInt64 { core.memory.xruns }
    public var periodFrames: Int { core.memory.periodFrames }
    /// The frames asked for with a duration have all been taken.
    public var isComplete: Bool { counters.pointee.isComplete.load(ordering: .acquiring) }
    public var serverIsGone: Bool { core.memory.serverIsGone }
    public var sampleRateChanged: Bool { core.memory.sampleRateChanged }
    /// The rate the server changed to, once `sampleRateChanged` (0 before).
    public var changedSampleRate: Int { core.memory.changedSampleRate }
    public var fileHasFailed: Bool { writer?.anyFailed ?? false }
    /// Frames the take's files hold so far.
    public var framesWritten: UInt64 { writer?.framesWritten.load(ordering: .relaxed) ?? 0 }
    /// With `--trigger`: armed (waiting), recording, or hanging (below the off level); nil without.
    public var triggerState: TriggerState? {
        guard hasTrigger, let writer else { return nil }
        return TriggerState(rawValue: writer.triggerState.load(ordering: .relaxed))
    }

    public enum TriggerState: Int, Sendable {
        case armed = 0
        case recording, hanging
    }

    /// The files finalized after the first `count` of the run (the latest are kept). Main thread.
    public func closedFiles(after count: Int) -> (files: [ClosedTakeFile], total: Int) {
        writer?.closedFiles(after: count) ?? ([], 0)
    }
    /// The take streams to a descriptor (`record -`), not a file.
    public let streams: Bool
    /// The stream's reader went away (its write failed with EPIPE), as of the writer's last write.
    public var outputWasClosed: Bool { writer?.readerWentAway.load(ordering: .acquiring) ?? false }
    /// The cycle counter and server state for a watchdog thread; valid while this session lives.
    public var cycleProbe: CycleProbe { CycleProbe(state: core.memory.state) }

    /// Ends the take: the realtime side stops queueing, the writer drains and finalizes the
    /// file, and the counters are summed up. The client stays open until `close()`, so a JACK
    /// server that is slow to let go never holds up the file. Safe to call twice. Main thread.
    public func stop() -> CaptureSummary {
        if let summary { return summary }
        let serverLost = serverIsGone
        if !serverLost && core.isStarted { noteConnections() }
        core.stop()
        writeCycleTrace()
        drainServerGaps()
        let written = writer?.finish()
        let analysed = analysis?.finish()
        drainTimings()
        var final = CaptureSummary(
            sampleRate: sampleRate, channelNames: channelNames, sourcePorts: sourcePorts,
            framesTaken: framesTaken, framesWritten: written?.framesWritten ?? 0,
            framesDropped: framesDropped, serverGapCount: counters.pointee.serverGaps.load(ordering: .relaxed),
            framesSkippedByServer: counters.pointee.framesSkippedByServer.load(ordering: .relaxed),
            serverGaps: written?.serverGaps ?? serverGapLog,
            drops: written?.drops ?? [], xruns: xruns,
            readings: readings(), fileError: written?.failure, serverWasLost: serverLost || serverIsGone,
            sampleRateChanged: sampleRateChanged, callbackTiming: core.memory.timingSummary())
        final.monitorNonFiniteReplaced = counters.pointee.monitorNonFiniteReplaced.load(ordering: .relaxed)
        final.missedGapCount = counters.pointee.missedGaps.load(ordering: .relaxed)
        final.framesMissed = counters.pointee.framesMissed.load(ordering: .relaxed)
        final.missedGaps = missedLog
        final.timelineJitter = counters.pointee.timelineJitter.load(ordering: .relaxed)
        final.lateCycles = counters.pointee.lateCycles.load(ordering: .relaxed)
        final.uncertainGapCount = counters.pointee.uncertainGaps.load(ordering: .relaxed)
        final.framesUncertain = counters.pointee.framesUncertain.load(ordering: .relaxed)
        final.uncertainGaps = uncertainLog
        final.xrunCallbacks = core.memory.xrunCallbacks
        final.partialPath = written?.keptPartial
        final.framesPaused = written?.framesPaused ?? 0
        if hasTrigger { final.framesArmed = written?.framesArmed ?? 0 }
        final.streamed = streams
        final.changedSampleRate = changedSampleRate
        // A waiting input that never found a port is named by its request.
        let followed = zip(routeWatch.sources, sourceRequests).map { $0.isEmpty ? $1 ?? "" : $0 }
        final.neverConnected = zip(wasSeenConnected, zip(channelNames, followed)).filter { !$0.0 }.map {
            (input: $0.1.0, source: $0.1.1)
        }
        final.analysis = analysed
        final.analysisFramesMissed = counters.pointee.analysisFramesMissed.load(ordering: .relaxed)
        final.meterType = meterType
        final.ballisticReadings = analysis?.ballisticReadings() ?? []
        if writesSeveralFiles {
            final.files = written?.files ?? []
            final.fileCount = written?.fileCount ?? 0
        }
        summary = final
        return final
    }

    /// Deactivates and closes the JACK client (after `stop()`). Main thread.
    public func close() {
        core.close()
    }

    /// Test-only: writes the cycle trace (`MICMON_TEST_CYCLE_TRACE`) once the kernel stopped.
    /// Main thread.
    private func writeCycleTrace() {
        guard let (trace, path) = cycleTrace else { return }
        try? FileSystem.writeWhole(trace.pointee.lines().joined(separator: "\n") + "\n", to: path)
        cycleTrace = nil
    }
}
