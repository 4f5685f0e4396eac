// Retention (`--keep N`, `--keep-for DURATION`): the files micmon wrote for one FILE pattern, kept
// in a manifest beside them, and the deletion of the oldest of them. Only a file in the manifest
// is ever deleted, and only while it is still the file micmon wrote (same device, inode, size and
// modification time). One thread at a time (the operations thread; tests call it directly).

import Platform

/// How many files of a pattern to keep, and for how long. Both may be set: a file goes when
/// either says so. The newest file is never deleted by `keepCount`.
public struct RetentionPolicy: Sendable, Equatable {
    /// Keep the newest N files micmon wrote for the pattern (N ≥ 1).
    public var keepCount: Int?
    /// Keep files for this many seconds after micmon finalized them.
    public var keepForSeconds: Double?

    public init(keepCount: Int? = nil, keepForSeconds: Double? = nil) {
        self.keepCount = keepCount
        self.keepForSeconds = keepForSeconds
    }

    /// Whether it can delete anything at all.
    public var isActive: Bool { keepCount != nil || keepForSeconds != nil }
}

/// What one pass of retention did.
public struct RetentionOutcome: Sendable, Equatable {
    /// Files deleted (paths as the pattern produced them).
    public var removed: [String] = []
    /// Files retention would have deleted but did not, and why (changed since micmon wrote
    /// them, not a regular file any more, or the system's error).
    public var spared: [(path: String, reason: String)] = []
    /// Why the manifest could not be read or written, if it could not (retention then deletes
    /// nothing).
    public var problem: String?

    public init() {}

    public static func == (a: RetentionOutcome, b: RetentionOutcome) -> Bool {
        a.removed == b.removed && a.problem == b.problem
            && a.spared.map(\.path) == b.spared.map(\.path) && a.spared.map(\.reason) == b.spared.map(\.reason)
    }
}

/// The files micmon wrote for one FILE pattern, in this run and earlier ones, and the policy
/// that deletes the oldest. Hand it each finalized file (`fileWritten`), in the order they close.
///
/// The manifest lives in the pattern's root (the folder part before the first component with a
/// `%` field: `logs` for `logs/%Y-%m-%d/%H%M%S.flac`, `.` for `take.wav`), named after the rest of
/// the pattern (`.micmon-files-%Y-%m-%d_%H%M%S.flac`). Its first line holds that rest of the
/// pattern exactly; a manifest whose first line differs is another pattern's, and is neither
/// used nor replaced. Each further line is one file: when micmon finalized it (seconds since the
/// epoch), its device, inode, size and modification time, and its path relative to the root.
/// The manifest is replaced whole (written beside, renamed over), so a reader never sees half;
/// two runs of one pattern at once can lose each other's entries, which only means files that
/// are never deleted.
public final class Retention: @unchecked Sendable {
    public let pattern: String
    public let policy: RetentionPolicy
    /// The pattern's root folder and the rest of the pattern below it.
    public let root: String
    public let relativePattern: String
    public let manifestPath: String

    struct Entry: Equatable {
        var closedAt: Double
        var identity: FileIdentity
        var relativePath: String
    }

    static let header = "micmon-files 1\t"

    public init(pattern: String, policy: RetentionPolicy) {
        self.pattern = pattern
        self.policy = policy
        (root, relativePattern) = Self.split(pattern)
        let name = relativePattern.map { $0 == "/" ? "_" : $0 }
        manifestPath = (root == "." ? "" : root + (root.hasSuffix("/") ? "" : "/")) + ".micmon-files-" + String(name)
    }

    /// The folder part of `pattern` before its first component holding a `%` (a strftime field),
    /// and the rest. "take.wav" → (".", "take.wav"); "/data/%Y/%H.wav" → ("/data", "%Y/%H.wav").
    static func split(_ pattern: String) -> (root: String, rest: String) {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var fixed = 0
        while fixed < parts.count - 1 && !parts[fixed].contains("%") { fixed += 1 }
        let rootParts = parts[0 ..< fixed]
        let rest = parts[fixed...].joined(separator: "/")
        if rootParts.isEmpty { return (".", rest) }
        let joined = rootParts.joined(separator: "/")
        return (joined.isEmpty ? "/" : joined, rest)
    }

    /// `path` relative to the root, or nil when the pattern could not have produced it there.
    func relative(_ path: String) -> String? {
        if root == "." { return path.hasPrefix("/") ? nil : (path.hasPrefix("./") ? String(path.dropFirst(2)) : path) }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }

    func absolute(_ relativePath: String) -> String {
        root == "." ? relativePath : (root.hasSuffix("/") ? root : root + "/") + relativePath
    }

    /// Records `path` (a file the pattern produced, just finalized) in the manifest and deletes
    /// what the policy no longer keeps. `now`: the wall clock, seconds since the epoch.
    public func fileWritten(_ path: String, now: Double = WallClock.secondsSinceEpoch()) -> RetentionOutcome {
        var outcome = RetentionOutcome()
        var entries: [Entry]
        switch readManifest() {
        case .failure(let problem):
            outcome.problem = problem.text
            return outcome
        case .success(let read): entries = read
        }
        if let relativePath = relative(path), let identity = FileIdentity(regularFileAt: path) {
            entries.removeAll { $0.relativePath == relativePath }
            entries.append(Entry(closedAt: now, identity: identity, relativePath: relativePath))
        } else {
            outcome.spared.append((path, "not recorded: not a regular file under \(root)"))
        }
        entries = apply(to: entries, now: now, outcome: &outcome)
        if let problem = writeManifest(entries) { outcome.problem = problem }
        return outcome
    }

    /// Deletes the entries the policy lets go (oldest first) whose files are still as recorded;
    /// returns the entries that stay in the manifest.
    func apply(to entries: [Entry], now: Double, outcome: inout RetentionOutcome) -> [Entry] {
        guard policy.isActive else { return entries }
        let ordered = entries.enumerated().sorted {
            $0.element.closedAt == $1.element.closedAt
                ? $0.offset < $1.offset : $0.element.closedAt < $1.element.closedAt
        }.map(\.element)
        var kept: [Entry] = []
        for (index, entry) in ordered.enumerated() {
            let beyondCount = policy.keepCount.map { ordered.count - index > $0 } ?? false
            let tooOld = policy.keepForSeconds.map { now - entry.closedAt > $0 } ?? false
            guard beyondCount || tooOld else {
                kept.append(entry)
                continue
            }
            let path = absolute(entry.relativePath)
            guard let now = FileIdentity(regularFileAt: path) else {
                // Gone (deleted or moved by someone else) or no longer a regular file: not ours now.
                if PathEntry(path: path, followingLinks: false) != nil {
                    outcome.spared.append((path, "no longer a regular file"))
                }
                continue
            }
            guard now == entry.identity else {
                outcome.spared.append((path, "changed since micmon wrote it"))
                continue
            }
            if FileSystem.remove(path) {
                outcome.removed.append(path)
                removeSidecar(of: path)
            } else {
                outcome.spared.append((path, SystemError.current.description))
                kept.append(entry)
            }
        }
        return kept
    }

    /// The sidecar micmon wrote beside a file it removed (FILE.json, a regular file that begins
    /// as a take sidecar does): it goes with its file; anything else of that name stays.
    func removeSidecar(of path: String) {
        let sidecar = TakeMetadata.sidecarPath(for: path)
        guard FileIdentity(regularFileAt: sidecar) != nil,
            let bytes = FileSystem.readWhole(sidecar, limit: 1 << 20),
            bytes.starts(with: Array(#"{"type":"take_sidecar","#.utf8))
        else { return }
        _ = FileSystem.remove(sidecar)
    }

    /// Why a manifest cannot be used.
    struct ManifestProblem: Error {
        let text: String
    }

    func readManifest() -> Result<[Entry], ManifestProblem> {
        guard let bytes = FileSystem.readWhole(manifestPath) else {
            if PathEntry(path: manifestPath, followingLinks: false) == nil { return .success([]) }
            return .failure(ManifestProblem(text: "\(manifestPath): cannot be read"))
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        guard let first = lines.first, first == Self.header + Self.escape(relativePattern) else {
            return .failure(ManifestProblem(text: "\(manifestPath): not this pattern's list of files (left as it is)"))
        }
        var entries: [Entry] = []
        for line in lines.dropFirst() {
            let fields = line.split(separator: "\t", maxSplits: 5, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let closedAt = Double(fields[0]), let device = UInt64(fields[1]),
                let inode = UInt64(fields[2]), let size = UInt64(fields[3]), let modified = Int64(fields[4])
            else { continue }
            entries.append(
                Entry(
                    closedAt: closedAt,
                    identity: FileIdentity(device: device, inode: inode, size: size, modifiedNanoseconds: modified),
                    relativePath: Self.unescape(fields[5])))
        }
        return .success(entries)
    }

    func writeManifest(_ entries: [Entry]) -> String? {
        var text = Self.header + Self.escape(relativePattern) + "\n"
        for entry in entries {
            let seconds = (entry.closedAt * 1000).rounded() / 1000
            text +=
                "\(seconds)\t\(entry.identity.device)\t\(entry.identity.inode)\t\(entry.identity.size)\t"
                + "\(entry.identity.modifiedNanoseconds)\t\(Self.escape(entry.relativePath))\n"
        }
        do { try FileSystem.writeWhole(text, to: manifestPath) } catch {
            return "\(manifestPath): cannot be written: \(error.description)"
        }
        return nil
    }

    /// A path on one line: `\` as `\\`, a tab as `\t`, a newline as `\n`.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func unescape(_ text: String) -> String {
        var out = ""
        var escaped = false
        for character in text {
            if escaped {
                out.append(character == "t" ? "\t" : character == "n" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}
