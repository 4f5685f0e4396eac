import DSP
import Engine
import Jack
import Platform
import SoundFile
import TerminalUI

/// `micmon denoise IN OUT`: the noise suppressor over a file, block by block. Main thread.
enum DenoiseCommand {
    static func run(_ options: DenoiseOptions) -> ExitCode {
        let reader: SoundFileReader
        do {
            reader = try SoundFileReader(path: options.inputPath)
        } catch {
            Console.error("micmon: " + Messages.cannotRead(options.inputPath, error.message))
            return .usage
        }
        defer { reader.close() }
        guard reader.channelCount == 2 else {
            Console.error("micmon: " + Messages.denoiseChannels(options.inputPath, has: reader.channelCount))
            return .usage
        }
        let suppressor: NoiseSuppressor
        do {
            suppressor = try NoiseSuppressor(sampleRate: reader.sampleRate, latency: options.latency)
        } catch {
            Console.error("micmon: \(options.inputPath): \(error.description)")
            return .usage
        }
        do {
            try OutputPath.check(options.outputPath, force: options.force, inputs: [options.inputPath])
        } catch {
            Console.error("micmon: \(error.description)")
            return .usage
        }
        let writer: SoundFileWriter
        do {
            writer = try SoundFileWriter(
                path: options.outputPath, format: options.format,
                sampleRate: reader.sampleRate, channelCount: 1, replacesExisting: options.force,
                placement: .atClose)
        } catch  where error.isAlreadyThere || error.isInUse {
            Console.error("micmon: " + OutputPath.creationRefusal(error))
            return .usage
        } catch  where error.isFormatRefusal {
            Console.error("micmon: \(error.description); nothing was written")
            return .usage
        } catch {
            Console.error("micmon: " + Messages.cannotWrite(options.outputPath, error.message))
            return .fileError
        }

        var outcome = ExitCode.ok
        let result = process(reader: reader, writer: writer, suppressor: suppressor, blockFrames: options.blockFrames)
        if let writeError = result.writeError {
            Console.error("micmon: " + Messages.cannotWrite(options.outputPath, writeError.message))
            outcome = .fileError
        } else if result.framesRead < reader.frameCount {
            Console.error(
                "micmon: "
                    + Messages.endedEarly(
                        options.inputPath, framesRead: result.framesRead,
                        of: reader.frameCount))
            outcome = .usage
        }
        // OUT appears only when complete (the writer places it at close): a damaged input or a
        // failed write leaves OUT as it was, and whatever it replaces untouched.
        if outcome != .ok {
            writer.discard()
            return outcome
        }
        do { try writer.close() } catch  where error.isAlreadyThere || error.isInUse {
            Console.error("micmon: " + OutputPath.creationRefusal(error))
            return .usage
        } catch {
            Console.error("micmon: " + Messages.cannotFinish(options.outputPath, error.message))
            return .fileError
        }
        return outcome
    }

    /// IN through the capture kernel and its suppressor into OUT (Engine's offline driver),
    /// `blockFrames` at a time, until IN ends or a write fails. Returns the frames read and the
    /// write error, if any.
    static func process(
        reader: SoundFileReader, writer: SoundFileWriter, suppressor: NoiseSuppressor,
        blockFrames block: Int
    ) -> (framesRead: Int64, writeError: SoundFileError?) {
        let result = OfflineDenoise.run(reader: reader, writer: writer, blockFrames: block, suppressor: suppressor)
        return (result.framesRead, result.writeError)
    }
}
