// Files by path: removing, folders (made as a path needs them, the nearest that exists), whole
// small files read and written at once. Any non-realtime thread (what is at a path:
// PathEntry.swift).

import Glibc

public enum FileSystem {
    /// Removes a file. Returns false when it could not.
    @discardableResult
    public static func remove(_ path: String) -> Bool { unlink(path) == 0 }

    /// The folder `path` is in: "." for a bare name, "/" for a file at the root.
    public static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// Makes `folder` and every missing folder above it (mode 0777 less the umask). Throws the
    /// system's error for the first that cannot be made; an existing folder is fine.
    public static func makeFolders(_ folder: String) throws(SystemError) {
        if folder.isEmpty || PathEntry(path: folder, followingLinks: true)?.isDirectory == true { return }
        let parent = parentFolder(of: folder)
        if parent != folder { try makeFolders(parent) }
        if mkdir(folder, 0o777) != 0 && errno != EEXIST { throw SystemError.current }
    }

    /// The nearest folder at or above `folder` that exists (what `makeFolders` would build on;
    /// it may be a file, which `makeFolders` then cannot build on).
    public static func nearestExistingFolder(of folder: String) -> String {
        nearestExisting(from: folder) { _ in true }
    }

    /// The nearest folder at or above `path`'s folder that exists as a folder (a pattern's
    /// folders may not be made yet): where a file at `path` would take its space from. "." for a
    /// bare name.
    public static func existingFolder(containing path: String) -> String {
        nearestExisting(from: parentFolder(of: path)) { $0.isDirectory }
    }

    /// The one folder walk: `folder`, then each folder above it, up to the first whose entry
    /// exists and is `accepted`, or the top of the path ("/" or ".") when none is.
    private static func nearestExisting(from folder: String, accepted: (PathEntry) -> Bool) -> String {
        var current = folder
        while true {
            if let entry = PathEntry(path: current, followingLinks: true), accepted(entry) { return current }
            let parent = parentFolder(of: current)
            if parent == current { return current }
            current = parent
        }
    }

    /// Writes `text` to `path` whole or not at all: into a new file beside it
    /// (`path.partial-PID`), then renamed over `path`, so a reader never sees half of it and a
    /// failure leaves nothing behind. Throws the system's error.
    public static func writeWhole(_ text: String, to path: String) throws(SystemError) {
        let temporary = path + ".partial-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SystemError.current }
        var failure: SystemError?
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count && failure == nil {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno != EINTR { failure = SystemError.current }
            } else {
                offset += written
            }
        }
        bytes = []
        if close(descriptor) != 0 && failure == nil { failure = SystemError.current }
        if failure == nil && rename(temporary, path) != 0 { failure = SystemError.current }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// The bytes of the file at `path` (up to `limit`), or nil when it cannot be opened or read.
    public static func readWhole(_ path: String, limit: Int = 64 << 20) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while result.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            result += chunk[0 ..< count]
        }
        return result
    }
}
