import DSP
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
            suppressor = try NoiseSuppressor(sampleRate: reader.sampleRate)
        } catch {
            Console.error("micmon: \(options.inputPath): \(error.description)")
            return .usage
        }
        do {
            try OutputPath.check(options.outputPath, force: options.force)
        } catch {
            Console.error("micmon: \(error.description)")
            return .usage
        }
        let writer: SoundFileWriter
        do {
            writer = try SoundFileWriter(
                path: options.outputPath, format: options.format,
                sampleRate: reader.sampleRate, channelCount: 1)
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
        do { try writer.close() } catch {
            Console.error("micmon: " + Messages.cannotFinish(options.outputPath, error.message))
            return .fileError
        }
        // A damaged input leaves nothing behind, as the exit code promises.
        if outcome == .usage { FileSystem.remove(options.outputPath) }
        return outcome
    }

    /// The processing loop: IN through the suppressor into OUT, `blockFrames` at a time, until IN
    /// ends or a write fails. Returns the frames read and the write error, if any.
    static func process(
        reader: SoundFileReader, writer: SoundFileWriter, suppressor: NoiseSuppressor,
        blockFrames block: Int
    ) -> (framesRead: Int64, writeError: SoundFileError?) {
        // The realtime threads run with denormals flushed; so does this one, for the same output.
        ThreadEnvironment.enableFlushToZero()
        var interleaved = [Float](repeating: 0, count: block * 2)
        var primary = [Float](repeating: 0, count: block)
        var reference = [Float](repeating: 0, count: block)
        var clean = [Float](repeating: 0, count: block)
        var framesRead: Int64 = 0
        while true {
            let frames = interleaved.withUnsafeMutableBufferPointer { reader.read(into: $0) }
            if frames <= 0 { break }
            for i in 0 ..< frames {
                primary[i] = interleaved[2 * i]
                reference[i] = interleaved[2 * i + 1]
            }
            suppressor.process(primary: primary, reference: reference, clean: &clean, frameCount: frames)
            let writeError = clean.withUnsafeBufferPointer { buffer -> SoundFileError? in
                do throws(SoundFileError) {
                    try writer.write(interleaved: UnsafeBufferPointer(rebasing: buffer[0 ..< frames]))
                } catch {
                    return error
                }
                return nil
            }
            if let writeError { return (framesRead, writeError) }
            framesRead += Int64(frames)
        }
        return (framesRead, nil)
    }
}
