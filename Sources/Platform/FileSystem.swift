// Files by path: removing, folders. Any non-realtime thread (what is at a path: PathEntry.swift).

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
}
