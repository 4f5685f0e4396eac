// Sample-rate conversion (libsamplerate) for playback's varispeed and rate matching. The
// playback reader thread; never the realtime thread.

import CSampleRate

/// Sample-rate conversion and varispeed with libsamplerate (band-limited sinc). Converts
/// interleaved float frames by `ratio` = output rate / input rate; the ratio may change between
/// calls (varispeed). Not for the realtime thread: the playback reader thread owns one.
public final class Resampler {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let channelCount: Int
    public private(set) var ratio: Double
    private let state: OpaquePointer

    /// `quality`: libsamplerate's converter (0 = best sinc, 2 = fastest sinc).
    public init(channelCount: Int, ratio: Double, quality: Int32 = 1) throws(Failure) {
        var error: Int32 = 0
        guard let state = src_new(quality, Int32(channelCount), &error) else {
            throw Failure(description: "libsamplerate: " + String(cString: src_strerror(error)))
        }
        guard src_is_valid_ratio(ratio) != 0 else {
            src_delete(state)
            throw Failure(description: "libsamplerate: ratio \(ratio) is out of range")
        }
        self.state = state
        self.channelCount = channelCount
        self.ratio = ratio
    }

    deinit { src_delete(state) }

    /// Converts as much of `input` as fits in `output`. Returns the input frames used and the
    /// output frames made. Pass `endOfInput` once no more input will follow, and keep calling
    /// until it makes no more output.
    public func process(
        input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>,
        endOfInput: Bool
    ) throws(Failure) -> (inputFramesUsed: Int, outputFrames: Int) {
        var data = SRC_DATA()
        data.data_in = input.baseAddress
        data.input_frames = input.count / channelCount
        data.data_out = output.baseAddress
        data.output_frames = output.count / channelCount
        data.end_of_input = endOfInput ? 1 : 0
        data.src_ratio = ratio
        let error = src_process(state, &data)
        if error != 0 { throw Failure(description: "libsamplerate: " + String(cString: src_strerror(error))) }
        return (data.input_frames_used, data.output_frames_gen)
    }
}
