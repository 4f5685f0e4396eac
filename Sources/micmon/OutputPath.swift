import Platform

/// Checks, before anything starts, that a take can be written at `path`. Leaves nothing behind.
/// Main thread.
enum OutputPath {
    static func check(_ path: String, force: Bool) throws(UsageError) {
        if path.isEmpty { throw UsageError("FILE is empty") }
        let existing = FileStatus(path: path)
        if let existing, existing.isDirectory {
            throw UsageError("\(path) is a directory; give a file name inside it")
        }
        if existing != nil && !force {
            throw UsageError("\(path) exists; use --force to overwrite it")
        }
        let folder = parentFolder(of: path)
        guard let folderStatus = FileStatus(path: folder) else {
            throw UsageError("cannot write \(path): folder \(folder) does not exist")
        }
        if !folderStatus.isDirectory {
            throw UsageError("cannot write \(path): \(folder) is not a folder")
        }
        do {
            try FileSystem.probeWrite(path, creatingExclusively: existing == nil)
        } catch {
            throw UsageError("cannot write \(path): \(error.description)")
        }
        if existing == nil { FileSystem.remove(path) }
    }

    static func parentFolder(of path: String) -> String { FileSystem.parentFolder(of: path) }
}
