import DSP
import Engine
import Glibc
import Jack
import SoundFile

extension Usage {
    static let denoise = """
    micmon denoise — the dual-mic noise suppressor on a file, offline

    Usage: micmon denoise IN OUT [--block N] [--format F] [--bits B] [--force]

    IN is a 2-channel file at 44100 or 48000 Hz (any format libsndfile reads):
    channel 1 the primary mic near the talker, channel 2 the reference mic a
    few centimetres further away. OUT is the clean primary, mono, the same
    length and rate, float WAV unless --format/--bits or its extension say
    otherwise.

    The file goes through exactly the code the realtime path runs, in blocks
    of N frames as if N were the JACK period (default 256, 1 … 8192), so OUT
    is what `record --denoise` would have written. The output lags the input
    by the suppressor's 8 ms frame (384 frames at 48 kHz), as live.

    Options:
          --block N       frames per block (the JACK period to imitate)
          --format F      wav, w64, rf64, caf, flac (default: from OUT's
                          extension, else wav)
          --bits B        16, 24, 32 or float (default float; 24 for flac)
          --force         overwrite OUT if it exists

    Exit codes:
      0   OUT written
      64  usage error or unusable IN (not two channels, unreadable, an
          unsupported rate); nothing was created
      74  OUT could not be written
    """
}

/// `micmon denoise IN OUT`: the noise suppressor over a file, block by block.
enum DenoiseCommand {
    struct Invocation {
        var inputPath = ""
        var outputPath = ""
        var blockFrames = 256
        var format = AudioFileFormat(container: .wav, encoding: .float)
        var force = false
    }

    /// Parses the arguments after `denoise`; nil means `--help`.
    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation? {
        var invocation = Invocation()
        var positional: [String] = []
        var formatName: String?, bitsName: String?
        var index = 0
        func value(_ option: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError("option \(option) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help": return nil
            case "--force": invocation.force = true
            case "--format": formatName = try value(argument)
            case "--bits": bitsName = try value(argument)
            case "--block":
                let text = try value(argument)
                guard let frames = Int(text), (1 ... 8192).contains(frames) else {
                    throw UsageError("--block needs a whole number of frames from 1 to 8192, not '\(text)'")
                }
                invocation.blockFrames = frames
            default:
                if argument.hasPrefix("-") && argument.count > 1 {
                    throw UsageError("unknown option '\(argument)' for micmon denoise (see micmon denoise --help)")
                }
                positional.append(argument)
            }
            index += 1
        }
        guard positional.count == 2 else {
            throw UsageError("denoise needs IN and OUT files (see micmon denoise --help)")
        }
        invocation.inputPath = positional[0]
        invocation.outputPath = positional[1]
        invocation.format = try ArgumentParser.chooseFormat(
            path: invocation.outputPath, formatName: formatName, bitsName: bitsName)
        return invocation
    }

    /// Main thread.
    static func run(_ arguments: [String]) -> ExitCode {
        let invocation: Invocation
        do {
            guard let parsed = try parse(arguments) else {
                Console.out(Usage.denoise + "\n")
                return .ok
            }
            invocation = parsed
        } catch {
            Console.error("micmon: \(error.description)")
            return .usage
        }

        let reader: SoundFileReader
        do {
            reader = try SoundFileReader(path: invocation.inputPath)
        } catch {
            Console.error("micmon: cannot read \(invocation.inputPath): \(error.message)")
            return .usage
        }
        defer { reader.close() }
        guard reader.channelCount == 2 else {
            Console.error("micmon: \(invocation.inputPath) has \(reader.channelCount) channel\(reader.channelCount == 1 ? "" : "s"); denoise needs 2 (primary, reference)")
            return .usage
        }
        let suppressor: NoiseSuppressor
        do {
            suppressor = try NoiseSuppressor(sampleRate: reader.sampleRate)
        } catch {
            Console.error("micmon: \(invocation.inputPath): \(error.description)")
            return .usage
        }
        do {
            try OutputPath.check(invocation.outputPath, force: invocation.force)
        } catch {
            Console.error("micmon: \(error.description)")
            return .usage
        }
        let writer: SoundFileWriter
        do {
            writer = try SoundFileWriter(
                path: invocation.outputPath, format: invocation.format,
                sampleRate: reader.sampleRate, channelCount: 1)
        } catch {
            Console.error("micmon: cannot write \(invocation.outputPath): \(error.message)")
            return .fileError
        }

        // The capture kernel over the file, block by block (Engine's offline driver).
        let result = OfflineDenoise.run(reader: reader, writer: writer, blockFrames: invocation.blockFrames, suppressor: suppressor)
        let framesRead = result.framesRead
        var outcome = ExitCode.ok
        if let writeError = result.writeError {
            Console.error("micmon: cannot write \(invocation.outputPath): \(writeError.message)")
            outcome = .fileError
        }
        if outcome == .ok && framesRead < reader.frameCount {
            Console.error("micmon: \(invocation.inputPath) ended after \(framesRead) of \(reader.frameCount) frames (damaged file?)")
            outcome = .usage
        }
        do { try writer.close() } catch {
            Console.error("micmon: cannot finish \(invocation.outputPath): \(error.message)")
            return .fileError
        }
        // A damaged input leaves nothing behind, as the exit code promises.
        if outcome == .usage { unlink(invocation.outputPath) }
        return outcome
    }
}
