// The option tables of every command, as data. `--help`, the man page and the completion
// scripts are generated from them. Pure values; any thread.
import DSP
import Engine
import Jack
import SoundFile
import TerminalUI

/// Every command micmon knows, in the order `--help` lists them.
enum CommandName: String, CaseIterable, Sendable {
    case meter, record, play, monitor, latency, demo, denoise, report, completions, manual
    /// Prints JACK port names for the completion scripts; not listed.
    case ports
    /// Talk to a running recorder through its control socket.
    case mark, pause, resume, stop, status

    var spec: CommandSpec { CommandTable.spec(self) }
}

/// The noise suppressor's added delay, as the DSP code states it, for the help texts.
enum DenoiseFigures {
    /// Frames the clean channel lags its input (the same at 44.1 and 48 kHz), or 0 if the
    /// suppressor cannot be made. (The classic gain: the delay is the same, and the learned
    /// estimator's weights need not be rounded for a help text.)
    static let delayFrames: Int = (try? NoiseSuppressor(sampleRate: 48_000, gain: .classic))?.latencyFrames ?? 0

    /// "5.3 ms" at `sampleRate`.
    static func delayMilliseconds(at sampleRate: Int) -> String {
        TextFormat.fixed(Double(delayFrames) / Double(sampleRate) * 1000, decimals: 1) + " ms"
    }

    /// "2.7 ms": the delay of `latency` at `sampleRate`.
    static func delayMilliseconds(at sampleRate: Int, latency: NoiseSuppressorLatency) -> String {
        let frames =
            (try? NoiseSuppressor(sampleRate: sampleRate, latency: latency, gain: .classic))?.latencyFrames ?? 0
        return TextFormat.fixed(Double(frames) / Double(sampleRate) * 1000, decimals: 1) + " ms"
    }
}

enum CommandTable {
    static let version = "micmon 0.1.0"
    static let title = "micmon — dual-microphone meter and recorder for JACK"

    // MARK: Options shared by several commands

    static let help = OptionSpec("help", short: "h", help: "show this help and exit")
    static let versionOption = OptionSpec("version", help: "show the version and exit")
    static let port = OptionSpec(
        "port", short: "p", "PORT", kind: .outputPort, repeatable: true,
        help: "source port for the next input (in_1, in_2, ...); repeatable, each port once. Exact names or "
            + "patterns: system:capture_*, 'player:out_?' (a port's exact name wins, even with [ in it). "
            + "Default: the first two physical capture ports that are not monitors, else the first two "
            + "outputs named *:capture_* (PipeWire's virtual sources), else micmon refuses to start "
            + "(exit 64, listing the ports) unless --allow-unconnected.")
    static let name = OptionSpec(
        "name", short: "n", "NAME", kind: .text,
        help: "JACK client name (default: micmon; at most \(JackClient.maximumNameLength) bytes, JACK's limit)")
    static let server = OptionSpec(
        "server", short: "s", "NAME", kind: .text,
        help: "JACK server name (default: $JACK_DEFAULT_SERVER or \"default\")")
    /// `--duration`: 1 ms to 31 days (a take's frame count stays far inside UInt64 at any rate).
    static let durationRange = NumberRange(0.001, 2_678_400, unit: "s")
    static let duration = OptionSpec(
        "duration", "S", kind: .number(durationRange),
        help: "stop after S seconds (a take then holds exactly S × rate frames)")
    static let json = OptionSpec("json", help: "print one JSON object per meter update instead of bars")
    static let allowUnconnected = OptionSpec(
        "allow-unconnected",
        help: "when no -p (or -o) is given and no port fits the default rule, run with the ports connected "
            + "to nothing instead of refusing (exit 64); a -p that matches no port yet holds one input that "
            + "reads silence until a port matches (a source client started later), and a take in which it "
            + "never did exits 66")
    /// play's: it has outputs only.
    static let allowUnconnectedOutputs = OptionSpec(
        "allow-unconnected",
        help: "when no -o is given and no port fits the default rule, play to nothing instead of refusing "
            + "(exit 64)")
    static let waitServer = OptionSpec(
        "wait-server",
        help: "when the server goes away, finalize the take, wait for a server of the same name and go on "
            + "(record: into FILE numbered before its extension: rec.wav, then rec-2.wav, rec-3.wav, ...); a "
            + "lost server is then not an error; when the graph stops calling micmon (no process cycle for 4 s), "
            + "wait for its cycles instead of ending with exit 76")
    static var denoise: OptionSpec {
        OptionSpec(
            "denoise",
            help: "dual-mic noise suppression: in_1 is the primary mic near the talker, in_2 the reference a "
                + "few cm further away. Adds a \"clean\" meter and the noise reduction in dB; monitoring plays "
                + "the clean channel. 44.1 or 48 kHz; \(DenoiseFigures.delayMilliseconds(at: 48_000)) of added "
                + "delay (\(DenoiseFigures.delayFrames) frames at 48 kHz).")
    }
    static var denoiseLatency: OptionSpec {
        OptionSpec(
            "denoise-latency", "MODE", kind: .choice(NoiseSuppressorLatency.allCases.map(\.rawValue)),
            help: "with --denoise: standard (default, \(DenoiseFigures.delayMilliseconds(at: 48_000)) at 48 kHz) or "
                + "low (\(DenoiseFigures.delayMilliseconds(at: 48_000, latency: .low)) at 48 kHz, "
                + "\(DenoiseFigures.delayMilliseconds(at: 44_100, latency: .low)) at 44.1 kHz, for live headphone "
                + "monitoring: a little less noise reduction at twice the cost)")
    }
    static let format = OptionSpec(
        "format", "F", kind: .choice(ContainerFormat.allCases.map(\.rawValue)),
        help: "wav | w64 | rf64 | caf | flac | ogg (Vorbis) | opus (Ogg Opus) | mp3 | au. Default: from the file's "
            + "extension (one micmon does not know is refused), else wav. A wav take becomes RF64 on its own "
            + "before it reaches 4 GB. record - (stdout): au (default) or flac, whose headers need no seek.")
    static let quality = OptionSpec(
        "quality", "Q", kind: .number(NumberRange(0, 1)),
        help: "ogg, opus, mp3: 0 (smallest) … 1 (best); libsndfile's compression level is 1 − Q. Default: the "
            + "codec's.")
    static let bitrateMode = OptionSpec(
        "bitrate-mode", "M", kind: .choice(BitrateMode.allCases.map(\.rawValue)),
        help: "mp3: cbr | vbr (the only codec here with a mode). Default: the codec's.")
    static let bits = OptionSpec(
        "bits", "B", kind: .choice(SampleEncoding.allCases.map(\.rawValue)),
        help: "16 | 24 | 32 | float (default float; flac: 16 or 24, default 24). The rate is the server's.")
    static let force = OptionSpec(
        "force", help: "replace the file if it exists (a regular file or a link, never one another micmon is writing)")
    static let monitorOutput = OptionSpec(
        "output", short: "o", "PORT", kind: .inputPort, repeatable: true,
        help: "destination for the next output (out_1, out_2); repeatable, exact names or patterns. "
            + "Default: the first two physical inputs named *:playback_*, else the first two inputs named "
            + "*:playback_*, never a source's inputs; else micmon refuses to start (exit 64) unless "
            + "--allow-unconnected.")
    static let gain = OptionSpec(
        "gain", "DB", kind: .number(NumberRange(-60, 24, unit: "dB")), help: "output gain in dB (default 0)")
    static let channels = OptionSpec(
        "channels", "C", kind: .choice(CaptureConfiguration.RecordedChannels.allCases.map(\.rawValue)),
        help: "with --denoise: raw (the inputs), clean (the clean channel, mono) or all (inputs then clean; "
            + "default)")

    static let loudnessMode = OptionSpec(
        "loudness-mode", "MODE", kind: .choice(LoudnessMode.allCases.map(\.rawValue)),
        help: "loudness (EBU R128) and true peak: per-channel (default: each input its own mono programme), "
            + "dual-mono (each input a mono programme for two loudspeakers, +3 dB) or stereo (in_1, in_2 "
            + "as left and right of one programme)")

    /// `--loudness-mode` of a session (meter, record, monitor, demo): the modes and `off`.
    static let sessionLoudnessMode = OptionSpec(
        "loudness-mode", "MODE", kind: .choice(LoudnessMode.allCases.map(\.rawValue) + ["off"]),
        help: "loudness (EBU R128) and true peak: per-channel (default: each input its own mono programme), "
            + "dual-mono (each input a mono programme for two loudspeakers, +3 dB), stereo (in_1, in_2 "
            + "as left and right of one programme) or off (no loudness, true peak or --meter: the analysis "
            + "thread's CPU, which grows with the channel count, is saved)")

    static let meterOption = OptionSpec(
        "meter", "TYPE", kind: .choice(MeterType.allCases.map(\.rawValue)),
        help: "also read the inputs with a standard meter: peak (default: micmon's own only), ppm1 (IEC 60268-10 "
            + "Type I, DIN: 0 dB = -9 dBFS), ppm2a (Type IIa, BBC: marks 1-7, PPM 4 = -18 dBFS), ppm2b (Type IIb, "
            + "EBU: -12...+12 dB, 0 = -18 dBFS), vu (IEC 60268-17: 0 VU = -14 dBFS), k12, k14, k20 (K-System: "
            + "0 = -12, -14, -20 dB RMS); in the JSON lines and the summary")

    // MARK: record's rotation: pre-roll, level trigger, splits

    /// `--split`: 1 s to 31 days.
    static let splitRange = NumberRange(1, 2_678_400, unit: "s")
    static let preRoll = OptionSpec(
        "pre-roll", "S", kind: .number(NumberRange(0, 60, unit: "s")),
        help: "keep the last S seconds in memory (up to 60) and begin each triggered take with them: its file "
            + "starts S seconds before the trigger's sample (never before the previous take's end)")
    static let trigger = OptionSpec(
        "trigger", "DB", kind: .number(NumberRange(-120, 0, unit: "dBFS")),
        help: "start a take at the first sample whose magnitude reaches DB (on any input, or --trigger-channel); "
            + "each take goes to its own file, named from FILE as a pattern")
    static let triggerOff = OptionSpec(
        "trigger-off", "DB", kind: .number(NumberRange(-120, 0, unit: "dBFS")),
        help: "with --trigger: the level the take must stay below for --hang to end it (default: --trigger − 6 dB)")
    static let hang = OptionSpec(
        "hang", "S", kind: .number(NumberRange(0.01, 86400, unit: "s")),
        help: "with --trigger: end the take after S seconds below --trigger-off (default 3)")
    static let triggerChannel = OptionSpec(
        "trigger-channel", "N", kind: .number(NumberRange(1, 64, whole: true)),
        help: "with --trigger: watch only the file's channel N (1 = in_1) instead of every channel")
    static let split = OptionSpec(
        "split", "DURATION", kind: .text,
        help: "start a new file every DURATION (30s, 15m, 1h; 1 s to 31 days), sample-accurate: the files, "
            + "concatenated, are the take. FILE must hold strftime fields (rec-%Y%m%d-%H%M%S.flac); folders in it "
            + "are made, and a name already there gets -2, -3, ... (never overwritten; --force replaces)")
    static let splitOnClock = OptionSpec(
        "split-on-clock",
        help: "with --split: start files on whole multiples of DURATION of local time (--split 1h: at the top "
            + "of each hour); DURATION must divide a day")

    static let recordingOnly = "--format, --bits, --quality, --bitrate-mode and --force apply only when recording"
    static let recordingOptions = ["--format", "--bits", "--quality", "--bitrate-mode", "--force"]
    static let label = OptionSpec(
        "label", "NAMES", kind: .text,
        help: "names the screen shows for the inputs, in order, comma-separated (--label primary,reference; "
            + "an empty name keeps the port's). Default: the source port's JACK pretty name, else in_1, in_2, ...")

    static let takeDescription = OptionSpec(
        "description", "TEXT", kind: .text,
        help: "the take's description (up to 256 bytes): the bext chunk's Description in wav and rf64, "
            + "\"description\" in the sidecar FILE.json that every take gets (its events and markers)")

    static let meters = """
        Meters: sample peak with IEC 60268-18 fall-back (20 dB in 1.7 s) and a 2 s
        hold, RMS integrated over 300 ms. dBFS: a full-scale sine reads 0.0 peak and
        -3.01 RMS. Silence reads -160 dBFS. Updates at 20 Hz on a terminal, once a
        second as plain lines when stdout is not a terminal; colour only on a
        terminal and never with NO_COLOR. micmon reads stdin only when it is a
        terminal, key by key: space pause/resume, m mark, r reset the holds and
        clip counts, q stop (the terminal is given back on every way out). The
        control socket $XDG_RUNTIME_DIR/micmon/NAME.sock takes micmon mark, pause,
        resume, stop and status; SIGUSR1 marks, SIGUSR2 pauses or resumes.

        \(stdoutFailure)
        """

    /// What a failing stdout does, for every session's notes.
    static let stdoutFailure = """
        A stdout that fails (a pipe whose reader went away, a full disk, an I/O
        error) never ends or shortens a session: the display stops, one line on
        stderr says why, and the session runs to its own end; the exit code and
        the summary's reason are the session's (0 for a complete take).
        """

    static let sessionExitCodes: [ExitCodeSpec] = [
        .init(code: .ok, meaning: "ended as asked, nothing lost"),
        .init(code: .usage, meaning: "usage error, bad input, or no port to connect (nothing was created)"),
        .init(code: .serverUnavailable, meaning: "no JACK server, or the server went away (the take is finalized)"),
        .init(code: .software, meaning: "internal error"),
        .init(
            code: .fileError,
            meaning: "the file could not be written (finalized up to the fault), or record's disk guard ended the "
                + "take at --min-free (every frame taken is in the file)"),
        .init(
            code: .framesDropped,
            meaning: "frames were dropped or missed (the summary lists where; silence fills them), or, on "
                + "PipeWire, periods are unsure (listed too)"),
        .init(code: .sourceNeverConnected, meaning: "an input's source was never connected during the take (silence)"),
        .init(
            code: .sampleRateChanged,
            meaning: "the server's rate changed; the take ends at the last frame of its rate (with --wait-server "
                + "the next take starts at the new rate)"),
        .init(
            code: .cyclesStopped,
            meaning: "meter, record, monitor: no process cycle for 4 s while the server still answered (a dead "
                + "client upstream; the take is finalized)"),
    ]
    static let textExitCodes: [ExitCodeSpec] = [
        .init(code: .ok, meaning: "printed"),
        .init(code: .usage, meaning: "usage error"),
    ]

    // MARK: The commands

    static func spec(_ name: CommandName) -> CommandSpec {
        switch name {
        case .meter: return meter
        case .record: return record
        case .play: return play
        case .monitor: return monitor
        case .latency: return latency
        case .demo: return demo
        case .denoise: return denoiseCommand
        case .report: return report
        case .completions: return completions
        case .manual: return manual
        case .ports: return ports
        case .mark, .pause, .resume, .stop, .status: return control(name)
        }
    }

    static var meter: CommandSpec {
        CommandSpec(
            name: .meter, summary: "live peak and RMS meters of the inputs, nothing written", positionals: [],
            about: """
                Stops on --duration, SIGINT/SIGTERM/SIGHUP, or when the server goes away, and prints
                a summary (per channel: max peak, mean RMS, clips; xruns).
                """,
            options: [
                port, name, server, duration, json, waitServer, denoise, denoiseLatency, allowUnconnected, label,
                sessionLoudnessMode,
                meterOption, help, versionOption,
            ],
            refusals: [(recordingOptions, recordingOnly)],
            notes: meters, exitCodes: sessionExitCodes)
    }

    static var record: CommandSpec {
        CommandSpec(
            name: .record, summary: "record the inputs to a file while metering them",
            positionals: [
                PositionalSpec(
                    name: "FILE", kind: .file, help: "the take to write; - streams it to stdout (au or flac)")
            ],
            about: """
                Every frame the server delivers is written. The header is rewritten and flushed
                to the disk twice a second, so even kill -9 or a power cut leaves a file that
                opens, missing at most the last half second. FLAC, ogg, opus and mp3 cannot
                survive that by themselves: such a take is recorded through FILE.partial.w64
                (W64, 32-bit float), encoded into FILE at the end and removed; after a kill, a
                full disk or an I/O error, that file holds the take. opus holds only 8, 12, 16,
                24 or 48 kHz and mp3 8 … 48 kHz, one or two channels: another server rate or
                channel count is refused before anything is written (exit 64). A period that cannot be queued is counted as dropped
                and written as silence in its place, so the file keeps its timeline; the summary
                lists each drop and the exit code is 75.

                When the server's frame counter runs past the frames micmon was given and does
                not give them back (micmon was late or stopped), those frames are missed: silence
                in their place, listed and counted as dropped (exit 75). A late counter read
                that nets out is jitter, not a gap; frames the driver lost for every client are
                server gaps, listed apart with nothing inserted (docs/timeline.md). On PipeWire a
                short run of digital silence between sound is listed as unsure (exit 75): the
                graph may have given micmon silence there while the source had sound.

                Pause and resume: the space key on the terminal, SIGUSR2 (a toggle) or micmon
                pause / resume stop writing without closing the file; the meters go on, and a
                paused take holds only the frames recorded. A mark: the m key, SIGUSR1 or
                micmon mark [LABEL]. micmon stop (or q) ends the take as SIGINT does. Each is
                reported on stderr with its take frame (and as a JSON line with --json).

                record - writes the take to stdout (au by default, or flac) for a pipe: the
                meters and the summary go to stderr, and a reader that goes away ends the take
                cleanly with exit 141.
                """,
            options: [
                port, format, bits, quality, bitrateMode, force,
                OptionSpec(
                    "monitor",
                    help: "also play the inputs on out_1, out_2 while recording (-o and --gain as in micmon monitor)"),
                monitorOutput, gain, channels, name, server, duration, json, waitServer, denoise, denoiseLatency,
                allowUnconnected,
                label, sessionLoudnessMode, meterOption,
                OptionSpec(
                    "report",
                    help: "when the take ends, write FILE.report.svg (its picture, as micmon report --svg draws "
                        + "it, with the take's drops and server gaps) and FILE.report.json (as micmon report "
                        + "--json prints it) beside it"),
                preRoll, trigger, triggerOff, hang, triggerChannel, split, splitOnClock,
                takeDescription,
                OptionSpec(
                    "transport",
                    help: "follow the JACK transport (as jack_capture -jt): write while it rolls, pause while it "
                        + "stands (the take begins paused when it stands); each change is placed within a period"),
                OptionSpec(
                    "transport-split",
                    help: "as --transport, and each time the transport rolls again the take goes on in a new file"),
            ] + operationsOptions + [help, versionOption],
            refusals: [], notes: meters,
            exitCodes: sessionExitCodes + [
                .init(code: .outputClosed, meaning: "record -: the reader of stdout went away (the take ended cleanly)")
            ])
    }

    static var monitor: CommandSpec {
        CommandSpec(
            name: .monitor, summary: "hear the inputs on the outputs in the same cycle, with meters for both",
            positionals: [],
            about: """
                in_1 goes to out_1 and in_2 to out_2 in the same process cycle, so
                monitoring adds no period of latency. At --gain 0 the outputs are the
                inputs, bit for bit.
                """,
            options: [
                port, monitorOutput, gain, name, server, duration, json, waitServer, denoise, denoiseLatency,
                allowUnconnected, label,
                sessionLoudnessMode, meterOption, help, versionOption,
            ],
            refusals: [(recordingOptions, recordingOnly)],
            notes: meters, exitCodes: sessionExitCodes)
    }

    static var demo: CommandSpec {
        CommandSpec(
            name: .demo, summary: "meter (or record) a built-in two-mic demo voice on a private JACK server",
            positionals: [],
            about: """
                Starts a private JACK server (dummy backend, 48 kHz, 256 frames, its own
                server name, so it never touches yours) and a built-in two-mic demo source:
                a voice-like signal strongest at the primary mic, with noise on both. Then
                it meters the source, or records it with --record. Everything it started is
                stopped when it exits. For machines without a sound card; needs jackd
                (Debian: jackd2).
                """,
            options: [
                OptionSpec("record", "FILE", kind: .file, help: "record the demo to FILE instead of only metering it"),
                format, bits, quality, bitrateMode, force, channels, denoise, denoiseLatency, sessionLoudnessMode,
                meterOption,
                duration,
                json, name, label, help,
                versionOption,
            ],
            refusals: [
                (["-s", "--server"], "-s does not apply to micmon demo (it starts a private server of its own)"),
                (["-p", "--port"], "-p does not apply to micmon demo (the demo source feeds the inputs)"),
            ],
            notes: meters, exitCodes: sessionExitCodes)
    }

    static var latency: CommandSpec {
        CommandSpec(
            name: .latency, summary: "callback timing, DSP load and xruns; with a loop, the true round trip",
            positionals: [],
            about: """
                Registers out_1 and in_1 and measures for S seconds (default 5), or until
                SIGINT/SIGTERM/SIGHUP, then prints a summary either way:
                - every process cycle: how late the callback woke after the cycle start and
                  how long it ran; p50/p90/p99/p99.9/max in µs and % of the period, and a
                  histogram; micmon's DSP load and the server's (jack_cpu_load); xruns and
                  late cycles with their times;
                - with a loop: out_1 emits a periodic broadband signal (a 4096-frame chirp,
                  -6 dBFS peak) and in_1's return is cross-correlated with it. The round
                  trip in frames (sub-sample) and ms, min/mean/max over the run, polarity,
                  the time to lock, JACK's reported port latencies and what they leave
                  unaccounted. Round trips up to 2 s are measured; "no signal" when what
                  comes back is silence or not the signal.
                """,
            options: [
                OptionSpec(
                    "send", "PORT", kind: .inputPort,
                    help: "connect out_1 to PORT (an input port, e.g. system:playback_1)"),
                OptionSpec(
                    "return", "PORT", kind: .outputPort,
                    help: "connect PORT (an output port, e.g. system:capture_1) to in_1. For a cable through an "
                        + "interface, give both."),
                OptionSpec(
                    "software-loop",
                    help: "connect out_1 straight to in_1 (JACK adds a period; PipeWire's JACK passes silence "
                        + "through such a link: use --send and --return through a node there)"),
                OptionSpec("duration", "S", kind: .number(durationRange), help: "measure for S seconds (default 5)"),
                OptionSpec("json", help: "print the summary as one JSON object"),
                name, server, help, versionOption,
            ],
            refusals: [
                (
                    ["-p", "--port"],
                    "-p does not apply to micmon latency (use --send and --return, or --software-loop)"
                ),
                (recordingOptions, recordingOnly),
            ],
            notes: """
                micmon disconnects what it connected when it exits. PORT is an exact name or
                a pattern (its first match). micmon never reads stdin.

                \(stdoutFailure)
                """,
            exitCodes: [
                .init(code: .ok, meaning: "measured as asked"),
                .init(code: .usage, meaning: "usage error, or a --send/--return port that does not fit"),
                .init(code: .serverUnavailable, meaning: "no JACK server, or the server went away"),
                .init(code: .software, meaning: "internal error"),
                .init(code: .cyclesStopped, meaning: "no process cycle for 4 s: the graph stopped calling micmon"),
            ])
    }

    static var play: CommandSpec {
        CommandSpec(
            name: .play, summary: "play a file through JACK (volume, pan, loops, varispeed), with output meters",
            positionals: [PositionalSpec(name: "FILE", kind: .file, help: "the sound file to play")],
            about: """
                Any format libsndfile reads. A file whose rate differs from the server's is
                converted with libsamplerate. The file streams from disk (a reader thread
                fills a ring; the realtime callback only copies), so any length plays.
                Ends with exit 0 at the end of the file, or on SIGINT/SIGTERM/SIGHUP.
                """,
            options: [
                OptionSpec(
                    "output", short: "o", "PORT", kind: .inputPort, repeatable: true,
                    help: "destination for the next output (out_1, out_2); repeatable, exact names or patterns. "
                        + "Default: the first two physical inputs named *:playback_*, else the first two inputs "
                        + "named *:playback_*, never a source's inputs; else micmon refuses to start (exit 64) "
                        + "unless --allow-unconnected."),
                OptionSpec("volume", "V", kind: .number(NumberRange(0, 1)), help: "linear gain (default 1)"),
                OptionSpec(
                    "pan", "P", kind: .number(NumberRange(-1, 1)),
                    help: "-1 (left) … 1 (right), default 0. A mono file is panned with the constant-power law "
                        + "(θ = (P+1)·π/4, L = cos θ, R = sin θ: -3.01 dB each at centre); a stereo file is "
                        + "balanced (P < 0 lowers the right side linearly, P > 0 the left; centre leaves both "
                        + "untouched)."),
                OptionSpec(
                    "loops", "N", kind: .number(NumberRange(-1, 1_000_000, whole: true)),
                    help: "0 plays once, N plays N+1 times, -1 loops until stopped. The seam is sample-exact."),
                OptionSpec(
                    "rate", "R", kind: .number(NumberRange(0.5, 2)),
                    help: "varispeed with libsamplerate: speed and pitch change together (like tape), "
                        + "no time-stretch artefacts."),
                OptionSpec(
                    "on-route-loss", "ACTION", kind: .choice(["pause", "stop"]),
                    help: "pause (default) holds the place while the destination ports are gone and resumes "
                        + "when they return; stop ends."),
                OptionSpec("json", help: "print one JSON object per meter update, and the summary as JSON"),
                allowUnconnectedOutputs, name, server, help, versionOption,
            ],
            refusals: [],
            notes: stdoutFailure,
            exitCodes: [
                .init(code: .ok, meaning: "played to the end, or stopped by SIGINT/SIGTERM/SIGHUP"),
                .init(code: .usage, meaning: "usage error, a file that cannot be played, or no port to play to"),
                .init(code: .serverUnavailable, meaning: "no JACK server, or the server went away"),
                .init(code: .software, meaning: "internal error"),
                .init(code: .fileError, meaning: "the file could not be read to its end"),
                .init(code: .cyclesStopped, meaning: "no process cycle for 4 s: the graph stopped calling micmon"),
                .init(
                    code: .sampleRateChanged,
                    meaning: "the server's sample rate changed: playback stopped at the last frame of its rate"),
            ])
    }

    /// "256 frames (5.3 ms at 48 kHz, 5.8 ms at 44.1 kHz)".
    static var denoiseDelay: String {
        "\(DenoiseFigures.delayFrames) frames (\(DenoiseFigures.delayMilliseconds(at: 48_000)) at 48 kHz, "
            + "\(DenoiseFigures.delayMilliseconds(at: 44_100)) at 44.1 kHz)"
    }

    static var denoiseCommand: CommandSpec {
        CommandSpec(
            name: .denoise, summary: "the noise suppressor on a 2-channel file, offline, as --denoise runs it",
            positionals: [
                PositionalSpec(name: "IN", kind: .file, help: "the 2-channel file to read"),
                PositionalSpec(name: "OUT", kind: .file, help: "the clean file to write"),
            ],
            about: """
                IN is a 2-channel file at 44100 or 48000 Hz (any format libsndfile reads):
                channel 1 the primary mic near the talker, channel 2 the reference mic a
                few centimetres further away. OUT is the clean primary, mono, the same
                length and rate, float WAV unless --format/--bits or its extension say
                otherwise.

                The file goes through exactly the code the realtime path runs, in blocks
                of N frames as if N were the JACK period (default 256, 1 … 8192), so OUT
                is what `record --denoise` would have written. The output lags the input
                by the suppressor's delay, \(denoiseDelay), as live.

                OUT appears only when it is complete: it is written under a hidden name
                in OUT's folder (.OUT.micmon-…) and renamed into place at the end, so a
                damaged IN, a failed write or a killed run leaves OUT, and whatever
                --force would have replaced, as it was.
                """,
            options: [
                OptionSpec(
                    "block", "N", kind: .number(NumberRange(1, 8192, whole: true, unit: "frames")),
                    help: "frames per block (the JACK period to imitate)"),
                OptionSpec(
                    "denoise-latency", "MODE", kind: .choice(NoiseSuppressorLatency.allCases.map(\.rawValue)),
                    help: "the suppressor's delay, as --denoise-latency live: standard (default) or low"),
                OptionSpec(
                    "format", "F", kind: .choice(ContainerFormat.allCases.map(\.rawValue)),
                    help: "wav, w64, rf64, caf, flac, ogg, opus, mp3, au (default: from OUT's extension, else wav)"),
                OptionSpec(
                    "bits", "B", kind: .choice(SampleEncoding.allCases.map(\.rawValue)),
                    help: "16, 24, 32 or float (default float; 24 for flac)"),
                quality, bitrateMode,
                OptionSpec("force", help: "overwrite OUT if it exists"),
                help, versionOption,
            ],
            refusals: [], notes: nil,
            exitCodes: [
                .init(code: .ok, meaning: "OUT written"),
                .init(
                    code: .usage,
                    meaning: "usage error or unusable IN (not two channels, unreadable, an unsupported rate); "
                        + "nothing was created"),
                .init(code: .fileError, meaning: "OUT could not be written"),
            ])
    }

    static var report: CommandSpec {
        CommandSpec(
            name: .report, summary: "loudness, true peak, levels, clips and noise floor of sound files, and a picture",
            positionals: [PositionalSpec(name: "FILE...", kind: .file, help: "the files to report on")],
            about: """
                For each FILE (any format libsndfile reads), per channel: sample peak, true
                peak (dBTP), RMS, DC offset, clips (runs of full-scale samples), a noise-floor
                estimate (the 10th percentile of 50 ms RMS blocks); per loudness programme
                (see --loudness-mode): integrated loudness (EBU R128, LUFS), loudness range
                (LU), true peak; and the correlation of channels 1 and 2. The numbers are the
                ones a live take's summary gives (the same analysis, libebur128 for loudness).

                --svg draws the take: per channel the peak and RMS envelopes on a dB axis,
                short-term loudness, clips and, when FILE.json (a sidecar of markers, see
                docs/json.md) exists, its drops, server gaps and marks along the time axis.
                The picture is written whole or not at all.
                """,
            options: [
                OptionSpec("json", help: "print one JSON object per file (docs/json.md) instead of text"),
                OptionSpec(
                    "svg", "OUT.svg", kind: .file,
                    help: "also draw the take into OUT.svg (one FILE only); replaced if it exists"),
                loudnessMode, help, versionOption,
            ],
            refusals: [], notes: nil,
            exitCodes: [
                .init(code: .ok, meaning: "reported"),
                .init(
                    code: .usage,
                    meaning: "usage error, or a FILE that is not audio, holds no frames or holds NaN or ±∞ "
                        + "samples (nothing was printed or written)"),
                .init(code: .fileError, meaning: "OUT.svg could not be written (nothing was left half-written)"),
            ])
    }

    static var completions: CommandSpec {
        CommandSpec(
            name: .completions, summary: "print a shell completion script (bash, zsh or fish)",
            positionals: [
                PositionalSpec(name: "SHELL", kind: .choice(Shell.allCases.map(\.rawValue)), help: "bash, zsh or fish")
            ],
            about: """
                The script completes commands, options and their values; for -p, --return
                the output ports and for -o, --send the input ports of the running JACK
                server (the one -s names, else the default). For example:
                  bash: source <(micmon completions bash)
                  zsh:  micmon completions zsh > ~/.zfunc/_micmon   (with ~/.zfunc in fpath)
                  fish: micmon completions fish > ~/.config/fish/completions/micmon.fish
                """,
            options: [help], refusals: [], notes: nil, exitCodes: textExitCodes)
    }

    static var manual: CommandSpec {
        CommandSpec(
            name: .manual, summary: "print the manual page (roff)",
            positionals: [],
            about: "For example: micmon manual > micmon.1 && man -l micmon.1",
            options: [help], refusals: [], notes: nil, exitCodes: textExitCodes)
    }

    static var ports: CommandSpec {
        CommandSpec(
            name: .ports, summary: "print the running server's port names, one a line (for completion)",
            positionals: [],
            about: "Prints nothing, and exits 69, when no server answers.",
            options: [
                OptionSpec("output", help: "output ports only (sources)"),
                OptionSpec("input", help: "input ports only (destinations)"),
                server, help,
            ],
            refusals: [], notes: nil,
            exitCodes: textExitCodes + [.init(code: .serverUnavailable, meaning: "no JACK server answered")],
            isHidden: true)
    }

    /// `mark`, `pause`, `resume`, `stop`, `status`: one line to a running recorder's socket.
    static func control(_ name: CommandName) -> CommandSpec {
        let what: String
        switch name {
        case .mark: what = "put a mark (a cue) in a running take, with an optional LABEL"
        case .pause: what = "pause a running take (the file stays open; the meters go on)"
        case .resume: what = "resume a paused take"
        case .stop: what = "end a running take, as SIGINT does"
        default: what = "print a running recorder's state as one JSON object"
        }
        return CommandSpec(
            name: name, summary: what,
            positionals: name == .mark
                ? [PositionalSpec(name: "[LABEL]", kind: .text, help: "what to call the mark (one line)")] : [],
            about: """
                Talks to a running micmon record (or meter, monitor) through its control
                socket, $XDG_RUNTIME_DIR/micmon/NAME.sock, where NAME is the recorder's JACK
                client name (a second recorder of the same name gets NAME-2). Only the same
                user may connect (SO_PEERCRED); the recorder answers one line, which is
                printed. With one recorder running, it is the one; with several, -n NAME
                picks one (the error lists them). The same requests come from the keys on
                the recorder's terminal (space pause/resume, m mark, q stop) and from
                SIGUSR1 (mark) and SIGUSR2 (pause/resume).
                """,
            options: [
                OptionSpec(
                    "name", short: "n", "NAME", kind: .text,
                    help: "the recorder to talk to: its JACK client name, as its socket is named (default: the "
                        + "only one running)"),
                help,
            ],
            refusals: [], notes: nil,
            exitCodes: [
                .init(code: .ok, meaning: "the recorder did it (or it was done already: paused when paused)"),
                .init(
                    code: .usage,
                    meaning: "usage error, several recorders and no -n, or the recorder refused the command"),
                .init(
                    code: .serverUnavailable, meaning: "no recorder answers (none runs, or $XDG_RUNTIME_DIR is unset)"),
            ])
    }

    static var visibleCommands: [CommandSpec] { CommandName.allCases.map(\.spec).filter { !$0.isHidden } }
}

/// The shells `micmon completions` writes for.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}
