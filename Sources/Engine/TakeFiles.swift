// The files of a take: FILE as a pattern (strftime fields, folders made as needed, a name
// already there never overwritten), and opening one file of the take (with its crash-safe
// intermediate). Opened on the main thread (the first file, before activation) and on the
// writer thread (every later one); a file is then written by the writer thread alone.

import Platform
import SoundFile
import Synchronization

/// FILE as a pattern: strftime fields (`logs/%Y-%m-%d/%H%M%S.flac`), filled in with the local
/// time of a file's first frame. Pure; any thread.
public struct FilePattern: Sendable, Equatable {
    public let text: String

    public init(_ text: String) { self.text = text }

    /// Whether a field changes with the time: any `%` conversion but `%%`, `%n` and `%t`.
    /// With `--split` a pattern without one would give every file the same name.
    public var hasTimeFields: Bool {
        var escaped = false
        for character in text {
            if escaped {
                if character != "%" && character != "n" && character != "t" { return true }
                escaped = false
            } else if character == "%" {
                escaped = true
            }
        }
        return false
    }

    /// The name of a file whose first frame is at `wallClock` (seconds since the epoch), or nil
    /// when the expansion is empty, too long or ends in a folder.
    public func expand(at wallClock: Double) -> String? {
        let name = hasTimeFields || text.contains("%") ? CalendarTime.format(text, at: wallClock) : text
        guard let name, !name.isEmpty, !name.hasSuffix("/") else { return nil }
        return name
    }

    /// `take.wav` → `take-2.wav` (the number goes before the extension), for a name already there.
    public static func numbered(_ path: String, _ number: Int) -> String {
        let slash = path.lastIndex(of: "/")
        if let dot = path.lastIndex(of: "."), slash.map({ $0 < dot }) ?? true, dot != path.startIndex,
            slash.map({ path.index(after: $0) != dot }) ?? true
        {
            return String(path[..<dot]) + "-\(number)" + String(path[dot...])
        }
        return path + "-\(number)"
    }
}

/// One file of a take while it is written: what the writer writes into (`file`, the crash-safe
/// intermediate when the container cannot survive a kill), the asked container (`final`), and
/// which take frames it holds. Writer thread once handed to it.
final class TakeFile: @unchecked Sendable {
    /// FILE: the name the user sees (and the hooks get).
    let path: String
    let file: SoundFileWriter
    /// The asked container, when `file` is the intermediate; nil otherwise.
    let final: SoundFileWriter?
    var timeline = FileTimeline()
    /// Frames of silence written in place of lost ones.
    var framesDropped: UInt64 = 0
    /// The graph-wide gaps whose place falls within the take frames it spans, and their frames
    /// (nothing written for them): counted when it is closed.
    var serverGaps: UInt64 = 0
    var serverGapFrames: UInt64 = 0
    /// The wall-clock time its first frame was taken at, as named.
    let wallClock: Double
    /// Its `bext` facts and sidecar state, from just before its first frame (nil before, and
    /// when the take keeps no metadata).
    var metadata: TakeFileMetadata?

    init(path: String, file: SoundFileWriter, final: SoundFileWriter?, wallClock: Double) {
        self.path = path
        self.file = file
        self.final = final
        self.wallClock = wallClock
    }

    /// Removes a file that never got a frame (made ahead of a boundary the take did not reach).
    func discard() {
        file.discard()
        final?.discard()
    }
}

/// The names a run gave its files, so that none is given twice, nor replaced with `--force`,
/// across all the run's takes (`--wait-server` starts a take per server, each with its own
/// writer): for each name the pattern gave (before numbering), the highest number given with it
/// (1: the name itself), for the latest `limit` such names, so memory stays flat however long
/// the run (a pattern with time fields gives a new name each file, and never that name again
/// unless the clock goes back). Any non-realtime thread.
public final class TakeFileNames: Sendable {
    static let limit = 64
    private struct Given {
        var base: String
        var number: Int
    }
    /// Oldest first.
    private let given = Mutex<[Given]>([])

    public init() {}

    /// The first number not yet given with `base` (1 when none was).
    func nextNumber(for base: String) -> Int {
        given.withLock { given in (given.last { $0.base == base }?.number ?? 0) + 1 }
    }

    /// `base` was given with `number` (its latest, kept as the newest entry).
    func note(_ base: String, number: Int) {
        given.withLock { given in
            given.removeAll { $0.base == base }
            given.append(Given(base: base, number: number))
            if given.count > Self.limit { given.removeFirst(given.count - Self.limit) }
        }
    }
}

/// Opens the files of a take from FILE: fills in the pattern, makes the folders, and picks a
/// name nothing is at (`numbersTakenNames`: `-2`, `-3` … before the extension, after the
/// numbers the run gave already, `names`) or, with `replacesExisting`, replaces what is there
/// (never a file of this run). Any non-realtime thread, one at a time.
struct TakeFileOpener: Sendable {
    let pattern: FilePattern
    let format: AudioFileFormat
    let sampleRate: Int
    let channelCount: Int
    /// `--force`.
    let replacesExisting: Bool
    /// A file of a rotation or trigger run: a name already there gets a number instead of a
    /// refusal. Off, FILE is refused when something is there (a plain take, as before).
    let numbersTakenNames: Bool
    /// The names the run gave so far, in this take and its earlier ones.
    var names = TakeFileNames()

    /// The name the file whose first frame is at `wallClock` gets, before numbering.
    func name(at wallClock: Double) throws(SoundFileError) -> String {
        guard let name = pattern.expand(at: wallClock) else {
            throw SoundFileError(.create, path: pattern.text, message: "the pattern gives no file name")
        }
        return name
    }

    /// Creates the file (and its intermediate) for a first frame at `wallClock`. A name the run
    /// gave already (`names`) is never given again, so never replaced.
    func open(at wallClock: Double) throws(SoundFileError) -> TakeFile {
        let base = try name(at: wallClock)
        let folder = FileSystem.parentFolder(of: base)
        do { try FileSystem.makeFolders(folder) } catch {
            throw SoundFileError(.create, path: base, message: "cannot make folder \(folder): \(error.description)")
        }
        var number = numbersTakenNames ? names.nextNumber(for: base) : 1
        while true {
            let path = number == 1 ? base : FilePattern.numbered(base, number)
            let given = number
            number += 1
            let partial = TakeWriter.partialPath(for: path)
            let intermediate = format.container.intermediate
            if numbersTakenNames && number < 10_000 {
                if !replacesExisting && PathEntry(path: path, followingLinks: false) != nil { continue }
                if intermediate != nil && PathEntry(path: partial, followingLinks: false) != nil { continue }
            } else if intermediate != nil, PathEntry(path: partial, followingLinks: false) != nil {
                // One left by an earlier take may hold that take: refused before FILE is touched.
                throw SoundFileError(
                    .open, path: partial,
                    message: "a crash-safe intermediate is already there (it may hold an earlier take)")
            }
            do throws(SoundFileError) {
                let file = try SoundFileWriter(
                    path: path, format: format, sampleRate: sampleRate, channelCount: channelCount,
                    replacesExisting: replacesExisting)
                guard let intermediate else {
                    names.note(base, number: given)
                    return TakeFile(path: path, file: file, final: nil, wallClock: wallClock)
                }
                do throws(SoundFileError) {
                    let written = try SoundFileWriter(
                        path: partial, format: AudioFileFormat(container: intermediate, encoding: .float),
                        sampleRate: sampleRate, channelCount: channelCount)
                    names.note(base, number: given)
                    return TakeFile(path: path, file: written, final: file, wallClock: wallClock)
                } catch {
                    file.discard()
                    throw error
                }
            } catch {
                // Another recorder took the name between the look and the creation: the next number.
                if numbersTakenNames && error.isAlreadyThere && number < 10_000 { continue }
                throw error
            }
        }
    }
}
