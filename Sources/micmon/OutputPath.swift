import Engine
import Platform
import SoundFile

/// Checks, before anything starts, that a take can be written at `path`, by looking only
/// (`lstat`, `stat`, `statvfs`): it creates, opens and removes nothing. The file itself is
/// created once, later, by `SoundFileWriter` (exclusively, or replacing with `--force`), which
/// holds the same rules against anything that appears in between. Main thread.
///
/// - nothing there: a new file;
/// - a regular file, a symbolic link to one, a dangling symbolic link: refused without
///   `--force`; with it replaced by the new file (a link is replaced itself, never followed);
/// - a directory (or a link to one), a FIFO, a device, a socket (or a link to one): refused;
/// - the same file as one of `inputs` (same device and inode, by any path): refused.
enum OutputPath {
    static func check(_ path: String, force: Bool, inputs: [String] = []) throws(UsageError) {
        if path.isEmpty { throw UsageError("FILE is empty") }
        let found = PathEntry(path: path, followingLinks: false)
        let lookError = SystemError.current
        if let entry = found {
            let target = entry.kind == .symbolicLink ? PathEntry(path: path, followingLinks: true) : entry
            if let target {
                for input in inputs {
                    if let source = PathEntry(path: input, followingLinks: true), source.isSameFile(as: target) {
                        throw UsageError("\(path) is the same file as \(input); give another name for the output")
                    }
                }
            }
            let linkWords = entry.kind == .symbolicLink ? "a symbolic link to " : ""
            switch target?.kind {
            case .directory?:
                throw UsageError("\(path) is \(linkWords)a directory; give a file name inside it")
            case .regular?, nil:
                if !force {
                    if entry.kind == .symbolicLink {
                        throw UsageError("\(path) exists (a symbolic link); use --force to replace the link")
                    }
                    throw UsageError("\(path) exists; use --force to overwrite it")
                }
            case let kind?:
                throw UsageError("\(path) is \(linkWords)\(kind.rawValue); micmon writes only regular files")
            }
        } else if lookError != .noSuchFile {
            throw UsageError("cannot write \(path): \(lookError.description)")
        }
        let folder = parentFolder(of: path)
        guard let folderStatus = PathEntry(path: folder, followingLinks: true) else {
            throw UsageError("cannot write \(path): folder \(folder) does not exist")
        }
        if !folderStatus.isDirectory {
            throw UsageError("cannot write \(path): \(folder) is not a folder")
        }
        if let problem = FileSystem.creationProblem(inFolder: folder) {
            throw UsageError("cannot write \(path): \(problem)")
        }
    }

    /// The take's sidecar FILE.json (its markers and facts) may be written: nothing there, or
    /// `--force`. By looking only, like `check`. Main thread.
    static func checkSidecar(of path: String, force: Bool) throws(UsageError) {
        let sidecar = path + ".json"
        guard let entry = PathEntry(path: sidecar, followingLinks: false) else { return }
        if entry.isDirectory { throw UsageError("\(sidecar) (the take's sidecar) is a directory") }
        if !force { throw UsageError("\(sidecar) exists (the sidecar FILE.json); use --force to overwrite it") }
    }

    /// What to print when the file could not be put at FILE because something appeared there
    /// after `check` passed (another recorder created it), or with `--force` because another
    /// micmon is still writing what is there: refused, as `check` would, exit 64.
    static func creationRefusal(_ error: SoundFileError) -> String {
        if error.isInUse { return "\(error.description); nothing was written to it" }
        return
            "\(error.description) (it appeared after micmon checked the path: another recorder?); nothing was written to it"
    }

    static func parentFolder(of path: String) -> String { FileSystem.parentFolder(of: path) }

    /// Checks FILE as a pattern before anything starts: its first expansion (now) must name a
    /// file, and the folders it needs must be makeable under the nearest one that exists. A
    /// plain take (no rotation, no trigger) is then held to `check`'s rules; a rotation or
    /// trigger run numbers a name that is taken instead of refusing it. Looks only.
    static func checkPattern(_ path: String, force: Bool, rotation: TakeRotation) throws(UsageError) {
        if path.isEmpty { throw UsageError("FILE is empty") }
        guard let first = FilePattern(path).expand(at: CalendarTime.now()) else {
            throw UsageError("FILE '\(path)' gives no file name (empty, too long, or a folder)")
        }
        if !rotation.writesSeveralFiles { return try check(first, force: force) }
        let folder = parentFolder(of: first)
        let existing = FileSystem.nearestExistingFolder(of: folder)
        if existing != folder {
            guard let status = PathEntry(path: existing, followingLinks: true), status.isDirectory else {
                throw UsageError("cannot write \(first): \(existing) is not a folder")
            }
            if let problem = FileSystem.creationProblem(inFolder: existing) {
                throw UsageError("cannot make the folders of \(first): \(problem)")
            }
            return
        }
        if let entry = PathEntry(path: first, followingLinks: true), entry.isDirectory {
            throw UsageError("\(first) is a directory; give a file name inside it")
        }
        guard let folderStatus = PathEntry(path: folder, followingLinks: true), folderStatus.isDirectory else {
            throw UsageError("cannot write \(first): \(folder) is not a folder")
        }
        if let problem = FileSystem.creationProblem(inFolder: folder) {
            throw UsageError("cannot write \(first): \(problem)")
        }
    }
}
