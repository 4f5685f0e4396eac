// Files by path: what is there (stat), creating and removing. Any non-realtime thread.

import Glibc

/// What is at a path (`stat`, following symbolic links).
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case regular, directory, other }
    public let kind: Kind
    public let size: Int64

    /// Nil when nothing is there (or it cannot be looked at); `SystemError.current` says why.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        size = Int64(info.st_size)
    }

    public var isDirectory: Bool { kind == .directory }
}

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
}
