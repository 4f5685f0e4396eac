import CSndFile

/// Container formats micmon writes.
public enum ContainerFormat: String, CaseIterable, Sendable {
    case wav, w64, rf64, caf, flac

    var majorFormat: Int32 {
        switch self {
        case .wav: return Int32(SF_FORMAT_WAV)
        case .w64: return Int32(SF_FORMAT_W64)
        case .rf64: return Int32(SF_FORMAT_RF64)
        case .caf: return Int32(SF_FORMAT_CAF)
        case .flac: return Int32(SF_FORMAT_FLAC)
        }
    }

    /// The usual file name extension.
    public var fileExtension: String { rawValue }

    /// Whether a take in this container survives `kill -9`, a full disk or an I/O error readable,
    /// up to its last header update. WAV, W64, RF64 and CAF do (libsndfile rewrites their
    /// length fields on `SFC_UPDATE_HEADER_NOW`). FLAC does not: libsndfile writes its
    /// STREAMINFO only at close, and a stream cut mid-frame loses sync, so micmon records a FLAC
    /// take through a crash-safe intermediate (`intermediate`) and converts it at the end.
    public var survivesKill: Bool { self != .flac }

    /// The container a take in this one is recorded through when it does not survive a kill: W64
    /// (no 4 GB limit, length rewritten with the header). Nil when it does survive.
    public var intermediate: ContainerFormat? { survivesKill ? nil : .w64 }
}

/// Sample encodings micmon writes (`--bits`).
public enum SampleEncoding: String, CaseIterable, Sendable {
    case pcm16 = "16"
    case pcm24 = "24"
    case pcm32 = "32"
    case float = "float"

    var subtype: Int32 {
        switch self {
        case .pcm16: return Int32(SF_FORMAT_PCM_16)
        case .pcm24: return Int32(SF_FORMAT_PCM_24)
        case .pcm32: return Int32(SF_FORMAT_PCM_32)
        case .float: return Int32(SF_FORMAT_FLOAT)
        }
    }

    /// Bits per sample as stored.
    public var bitDepth: Int {
        switch self {
        case .pcm16: return 16
        case .pcm24: return 24
        case .pcm32, .float: return 32
        }
    }
}

/// A container + encoding pair, checked against libsndfile (`sf_format_check`).
public struct AudioFileFormat: Sendable, Equatable, CustomStringConvertible {
    public let container: ContainerFormat
    public let encoding: SampleEncoding

    public init(container: ContainerFormat, encoding: SampleEncoding) {
        self.container = container
        self.encoding = encoding
    }

    var sfFormat: Int32 { container.majorFormat | encoding.subtype }

    /// Whether libsndfile can write this combination at the given rate and channel count.
    public func isWritable(sampleRate: Int = 48000, channels: Int = 2) -> Bool {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = sfFormat
        return sf_format_check(&info) != 0
    }

    public var description: String {
        let bits = encoding == .float ? "32-bit float" : "\(encoding.bitDepth)-bit PCM"
        return "\(container.rawValue.uppercased()) \(bits)"
    }
}
