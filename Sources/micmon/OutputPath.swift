import Glibc

/// Checks, before anything starts, that a take can be written at `path`. Leaves nothing behind.
enum OutputPath {
    static func check(_ path: String, force: Bool) throws(UsageError) {
        if path.isEmpty { throw UsageError("FILE is empty") }
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists && (info.st_mode & S_IFMT) == S_IFDIR {
            throw UsageError("\(path) is a directory; give a file name inside it")
        }
        if exists && !force {
            throw UsageError("\(path) exists; use --force to overwrite it")
        }
        let folder = parentFolder(of: path)
        var folderInfo = stat()
        if stat(folder, &folderInfo) != 0 {
            throw UsageError("cannot write \(path): folder \(folder) does not exist")
        }
        if (folderInfo.st_mode & S_IFMT) != S_IFDIR {
            throw UsageError("cannot write \(path): \(folder) is not a folder")
        }
        // Try it for real (root passes access(2) checks that a read-only mount still refuses).
        let flags = exists ? O_WRONLY : (O_WRONLY | O_CREAT | O_EXCL)
        let fd = open(path, flags, 0o644)
        if fd < 0 {
            let reason = String(cString: strerror(errno))
            throw UsageError("cannot write \(path): \(reason)")
        }
        close(fd)
        if !exists { unlink(path) }
    }

    static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }
}
