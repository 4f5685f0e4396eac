import CSndFile

/// Container formats micmon writes: four PCM containers, FLAC (lossless) and three lossy codecs
/// (Ogg Vorbis, Ogg Opus, MPEG layer III), all through Debian 12's libsndfile, and Sun/NeXT AU,
/// whose header needs no seek (what `record -` streams to a pipe).
public enum ContainerFormat: String, CaseIterable, Sendable {
    case wav, w64, rf64, caf, flac, ogg, opus, mp3, au

    var majorFormat: Int32 {
        switch self {
        case .wav: return Int32(SF_FORMAT_WAV)
        case .w64: return Int32(SF_FORMAT_W64)
        case .rf64: return Int32(SF_FORMAT_RF64)
        case .caf: return Int32(SF_FORMAT_CAF)
        case .flac: return Int32(SF_FORMAT_FLAC)
        case .ogg, .opus: return Int32(SF_FORMAT_OGG)
        case .mp3: return Int32(SF_FORMAT_MPEG)
        case .au: return Int32(SF_FORMAT_AU)
        }
    }

    /// The one encoding of a lossy container (its codec), nil for the others, whose encoding
    /// is `--bits`.
    var codecSubtype: Int32? {
        switch self {
        case .ogg: return Int32(SF_FORMAT_VORBIS)
        case .opus: return Int32(SF_FORMAT_OPUS)
        case .mp3: return Int32(SF_FORMAT_MPEG_LAYER_III)
        case .wav, .w64, .rf64, .caf, .flac, .au: return nil
        }
    }

    /// Whether the container holds a lossy codec (`--bits` does not apply, `--quality` does).
    public var isLossy: Bool { codecSubtype != nil }

    /// Whether the codec has a bitrate mode (`--bitrate-mode`; `SFC_SET_BITRATE_MODE`). Only
    /// libsndfile's MPEG encoder takes one; its Vorbis and Opus encoders refuse the command.
    public var hasBitrateMode: Bool { self == .mp3 }

    /// The sample rates the codec can hold, or nil for any rate. Opus: 8, 12, 16, 24, 48 kHz;
    /// MPEG-1/2/2.5 layer III: 8 … 48 kHz.
    public var sampleRates: [Int]? {
        switch self {
        case .opus: return [8000, 12000, 16000, 24000, 48000]
        case .mp3: return [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .wav, .w64, .rf64, .caf, .flac, .ogg, .au: return nil
        }
    }

    /// The container a file name's extension names (`take.OGG` → ogg), or nil.
    public init?(fileExtensionOf path: String) {
        guard let text = Self.fileExtension(of: path) else { return nil }
        self.init(rawValue: text.lowercased())
    }

    /// The extension of a file name (after its last dot, not a leading one), or nil.
    public static func fileExtension(of path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let text = String(name[name.index(after: dot)...])
        return text.isEmpty ? nil : text
    }

    /// The usual file name extension.
    public var fileExtension: String { rawValue }

    /// Whether a take in this container survives `kill -9`, a full disk or an I/O error readable,
    /// up to its last header update. WAV, W64, RF64 and CAF do (libsndfile rewrites their
    /// length fields on `SFC_UPDATE_HEADER_NOW`). FLAC does not: libsndfile writes its
    /// STREAMINFO only at close, and a stream cut mid-frame loses sync; nor do the lossy codecs,
    /// whose encoders hold frames and pages until they are full. micmon records a take in any of
    /// these through a crash-safe intermediate (`intermediate`) and encodes it at the end.
    public var survivesKill: Bool {
        switch self {
        case .wav, .w64, .rf64, .caf, .au: return true
        case .flac, .ogg, .opus, .mp3: return false
        }
    }

    /// The container a take in this one is recorded through when it does not survive a kill: W64
    /// (no 4 GB limit, length rewritten with the header). Nil when it does survive.
    public var intermediate: ContainerFormat? { survivesKill ? nil : .w64 }

    /// Whether libsndfile writes the container to a pipe (`record -`): its header needs no seek
    /// back. AU (its length field says "unknown") and FLAC (STREAMINFO left without a length).
    public var streams: Bool { self == .au || self == .flac }
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

/// A bitrate mode of a lossy codec that has one (`--bitrate-mode`).
public enum BitrateMode: String, CaseIterable, Sendable {
    /// Constant bitrate (`SF_BITRATE_MODE_CONSTANT`).
    case cbr
    /// Variable bitrate (`SF_BITRATE_MODE_VARIABLE`).
    case vbr

    var libraryValue: Int32 {
        switch self {
        case .cbr: return Int32(SF_BITRATE_MODE_CONSTANT)
        case .vbr: return Int32(SF_BITRATE_MODE_VARIABLE)
        }
    }
}

/// A container + encoding pair, checked against libsndfile (`sf_format_check`), with the lossy
/// codecs' settings. The encoding of a lossy container is its codec (`encoding` is not used).
public struct AudioFileFormat: Sendable, Equatable, CustomStringConvertible {
    public let container: ContainerFormat
    public let encoding: SampleEncoding
    /// A lossy codec's quality, 0 (smallest file) … 1 (best), or nil for libsndfile's default.
    /// Given to libsndfile as its compression level, 1 − quality (`SFC_SET_COMPRESSION_LEVEL`).
    public let quality: Double?
    /// The bitrate mode of a codec that has one, or nil for its default.
    public let bitrateMode: BitrateMode?

    public init(
        container: ContainerFormat, encoding: SampleEncoding, quality: Double? = nil, bitrateMode: BitrateMode? = nil
    ) {
        self.container = container
        self.encoding = encoding
        self.quality = quality
        self.bitrateMode = bitrateMode
    }

    var sfFormat: Int32 { container.majorFormat | (container.codecSubtype ?? encoding.subtype) }

    /// Whether libsndfile can write this combination at the given rate and channel count (and,
    /// for a codec with fixed rates, whether the rate is one of them).
    public func isWritable(sampleRate: Int = 48000, channels: Int = 2) -> Bool {
        if let rates = container.sampleRates, !rates.contains(sampleRate) { return false }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = sfFormat
        return sf_format_check(&info) != 0
    }

    /// Why libsndfile cannot write this at `sampleRate` with `channels`, in words, or nil.
    public func refusal(sampleRate: Int, channels: Int) -> String? {
        if let rates = container.sampleRates, !rates.contains(sampleRate) {
            let list = rates.map(String.init).joined(separator: ", ")
            return "\(self) holds only \(list) Hz, not \(sampleRate) Hz"
        }
        if !isWritable(sampleRate: sampleRate, channels: channels) {
            return "libsndfile cannot write \(self) with \(channels) channels at \(sampleRate) Hz"
        }
        return nil
    }

    public var description: String {
        switch container {
        case .ogg: return "Ogg Vorbis"
        case .opus: return "Ogg Opus"
        case .mp3: return "MP3"
        case .wav, .w64, .rf64, .caf, .flac, .au:
            let bits = encoding == .float ? "32-bit float" : "\(encoding.bitDepth)-bit PCM"
            return "\(container.rawValue.uppercased()) \(bits)"
        }
    }
}
