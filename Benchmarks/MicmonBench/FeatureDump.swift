import DSP
import Foundation

// `micmon-bench --dump-denoise-features [--denoise-latency low]`: the noise suppressor's
// per-frame features for training its learned gain estimator, from the very code that runs live
// (Sources/CDenoiseModel/training/ reads them). Main thread only; not a benchmark.
//
// stdin: 48 kHz two-channel float32 samples, interleaved (primary, reference), little-endian.
// stdout: per analysed frame, `NoiseSuppressorBands.featureCount` float32 features, then as many
// float32 samples of the clean output as the hop (so the classic path's output can be checked too).

enum FeatureDump {
    static let flag = "--dump-denoise-features"

    /// Runs the dump and returns the exit status.
    static func run(arguments: [String]) -> Int32 {
        var latency = NoiseSuppressorLatency.standard
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--denoise-latency", let value = rest.popFirst(),
                let parsed = NoiseSuppressorLatency(rawValue: value)
            {
                latency = parsed
            } else {
                FileHandle.standardError.write(Data("micmon-bench: \(flag): unknown argument \(argument)\n".utf8))
                return 64
            }
        }
        let suppressor: NoiseSuppressor
        do { suppressor = try NoiseSuppressor(sampleRate: 48_000, latency: latency, gain: .classic) } catch {
            FileHandle.standardError.write(Data("micmon-bench: \(error)\n".utf8))
            return 1
        }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        let hop = suppressor.hopFrames
        let frames = input.count / (2 * MemoryLayout<Float>.size)
        var primary = [Float](repeating: 0, count: hop)
        var reference = [Float](repeating: 0, count: hop)
        var clean = [Float](repeating: 0, count: hop)
        let featureCount = NoiseSuppressorBands.featureCount
        var output = [Float]()
        output.reserveCapacity((frames / hop) * (featureCount + hop))
        input.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var start = 0
            while start + hop <= frames {
                for i in 0 ..< hop {
                    let at = 2 * (start + i) * MemoryLayout<Float>.size
                    primary[i] = raw.loadUnaligned(fromByteOffset: at, as: Float.self)
                    reference[i] = raw.loadUnaligned(fromByteOffset: at + MemoryLayout<Float>.size, as: Float.self)
                }
                suppressor.process(primary: primary, reference: reference, clean: &clean, frameCount: hop)
                output.append(contentsOf: suppressor.frameFeatures)
                output.append(contentsOf: clean)
                start += hop
            }
        }
        output.withUnsafeBytes { FileHandle.standardOutput.write(Data($0)) }
        return 0
    }
}
