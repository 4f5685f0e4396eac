import Glibc
import Platform

/// Command-line options of micmon-bench.
struct Options {
    var seconds = 30.0
    /// Rounds of the record and scaling sections; even, so that A B C and C B A come in pairs.
    var rounds = 4
    var jsonPath = ".build/micmon-bench.json"
    var thresholdsPath = ThresholdsFile.defaultPath()
    var ringBlocks = 2_000_000
    var micmonPath = Options.siblingExecutable("micmon")
    var sections: Set<String> = Options.allSections
    /// A record round in which the host stole more than this share of the processors during a
    /// take is taken again (at most `rounds` retakes in a run); 100 turns retakes off.
    var maxStealPercent = 2.0
    /// The file the report-floor section reads, and how many times.
    var reportFile: String?
    var reportRepeats = 3
    /// Whether the soak's micmon runs its default loudness analysis or `--loudness-mode off`.
    var soakLoudnessOff = false
    /// The soak's channels and sample rate (its period is 32 frames).
    var soakChannels = 64
    var soakSampleRate = 48000
    /// The soak's load beside micmon: `stress-ng --hdd 1` (true) or none.
    var soakDiskStress = true

    static let allSections: Set<String> = ["ring", "meters", "denoise", "loudness", "record", "scaling", "rotation"]
    /// Sections run only when named in --only: `report-floor` (needs --report-file) and `soak`, a long
    /// take by hand.
    static let namedSections: Set<String> = ["report-floor", "soak"]

    static let usage = """
        usage: micmon-bench [--seconds S] [--rounds R] [--json PATH] [--thresholds PATH]
                            [--ring-blocks N] [--micmon PATH]
                            [--only ring,meters,denoise,loudness,record,scaling,rotation,soak]
                            [--max-steal P] [--soak-loudness-mode default|off]
                            [--soak-channels N] [--soak-rate HZ] [--soak-stress hdd|none]
                            [--only report-floor --report-file FILE [--report-repeats N]]

          --seconds S      length of each micmon / jack_capture / jack_meter take (default 30;
                           the scaling takes last S/3)
          --rounds R       rounds of A B C, C B A, … (and of the scaling takes), an even number, so
                           that micmon and the bare client each run first in half of them;
                           medians are reported (default 4)
          --json PATH      where the JSON goes (default .build/micmon-bench.json); it is
                           always written, next to the table on stdout: every figure with
                           its spread, each target's outcome ("targets"), the raw runs
          --thresholds PATH  the targets the figures are held to (default
                           Benchmarks/thresholds.json); the table ends with which are met and
                           which missed
          --ring-blocks N  blocks per ring run (default 2000000)
          --micmon PATH    the micmon executable (default: next to micmon-bench)
          --only LIST      run only these sections (soak runs only when named: one take of
                           S seconds of 64 channels under nice stress-ng --hdd 1, by hand)
          --soak-loudness-mode M  the soak's micmon: default (its loudness analysis) or off
                           (--loudness-mode off, the recorder for many channels)
          --soak-channels N  the soak's channels, 1…64 (default 64)
          --soak-rate HZ   the soak's sample rate: 44100, 48000, 96000 or 192000 (default 48000)
          --soak-stress L  the soak's load beside micmon: hdd (nice stress-ng --hdd 1, the
                           default) or none (the host as it is)
          --max-steal P    take a record round again when the hypervisor stole more than P %
                           of the processors during one of its takes (/proc/stat; at most
                           R retakes; default 2, 100 for never): such takes miss JACK cycles
                           and say more about the host than about the programs
          --report-file FILE  the file of the report-floor section (named only with --only):
                           libebur128 alone on FILE, integrated loudness and LRA per channel,
                           the least any libebur128-based `micmon report` of it can cost
          --report-repeats N  passes over FILE (default 3); the CPU time of each is reported

        Build micmon first: swift build -c release --product micmon
        Exit status: 0 when every run succeeded (targets missed or not: a missed target is
        reported, never a failure), 1 when a run failed, 64 for bad arguments.
        """

    /// Parses the arguments, or returns the reason they are wrong.
    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var options = Options()
        var index = 0
        func value() throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(text: "\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        do throws(UsageError) {
            while index < arguments.count {
                let argument = arguments[index]
                switch argument {
                case "--seconds":
                    guard let s = Double(try value()), s >= 1, s <= 3600 else {
                        throw UsageError(text: "--seconds takes 1…3600")
                    }
                    options.seconds = s
                case "--rounds":
                    guard let r = Int(try value()), r >= 2, r <= 100, r % 2 == 0 else {
                        throw UsageError(text: "--rounds takes an even number, 2…100 (A B C and C B A come in pairs)")
                    }
                    options.rounds = r
                case "--json":
                    options.jsonPath = try value()
                case "--thresholds":
                    options.thresholdsPath = try value()
                case "--ring-blocks":
                    // Block indices travel as Float, exact below 2^24.
                    guard let n = Int(try value()), n >= 1000, n < 1 << 24 else {
                        throw UsageError(text: "--ring-blocks takes 1000…16777215")
                    }
                    options.ringBlocks = n
                case "--max-steal":
                    guard let p = Double(try value()), p >= 0, p <= 100 else {
                        throw UsageError(text: "--max-steal takes 0…100 (percent)")
                    }
                    options.maxStealPercent = p
                case "--soak-channels":
                    guard let count = Int(try value()), (1 ... 64).contains(count) else {
                        throw UsageError(text: "--soak-channels takes a count from 1 to 64")
                    }
                    options.soakChannels = count
                case "--soak-rate":
                    guard let rate = Int(try value()), [44100, 48000, 96000, 192000].contains(rate) else {
                        throw UsageError(text: "--soak-rate takes 44100, 48000, 96000 or 192000")
                    }
                    options.soakSampleRate = rate
                case "--soak-stress":
                    switch try value() {
                    case "hdd": options.soakDiskStress = true
                    case "none": options.soakDiskStress = false
                    default: throw UsageError(text: "--soak-stress takes hdd or none")
                    }
                case "--soak-loudness-mode":
                    switch try value() {
                    case "default": options.soakLoudnessOff = false
                    case "off": options.soakLoudnessOff = true
                    default: throw UsageError(text: "--soak-loudness-mode takes default or off")
                    }
                case "--report-file":
                    options.reportFile = try value()
                case "--report-repeats":
                    guard let n = Int(try value()), n >= 1, n <= 100 else {
                        throw UsageError(text: "--report-repeats takes 1…100")
                    }
                    options.reportRepeats = n
                case "--micmon":
                    options.micmonPath = try value()
                case "--only":
                    let names = Set(try value().split(separator: ",").map(String.init))
                    let known = allSections.union(namedSections)
                    guard !names.isEmpty, names.isSubset(of: known) else {
                        throw UsageError(text: "--only takes a list of \(known.sorted().joined(separator: ","))")
                    }
                    options.sections = names
                case "-h", "--help":
                    throw UsageError(text: "", isHelp: true)
                default:
                    throw UsageError(text: "unknown argument \(argument)")
                }
                index += 1
            }
            if options.sections.contains("report-floor") && options.reportFile == nil {
                throw UsageError(text: "the report-floor section needs --report-file FILE")
            }
        } catch {
            return .failure(error)
        }
        return .success(options)
    }

    /// `name` in the directory of this executable (.build/release when run by `swift run -c release`).
    static func siblingExecutable(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return ".build/release/\(name)" }
        let path = String(decoding: buffer[0 ..< count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return "\(directory)/\(name)"
    }
}

struct UsageError: Error {
    var text: String
    var isHelp = false
}
