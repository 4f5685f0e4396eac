// Free space on the file system that holds a path (statvfs), a file's identity as retention
// checks it before deleting (device, inode, size, modification time), and the wall clock retention
// dates files by. Any non-realtime thread (statvfs may block on a network file system).

import Glibc

/// What `statvfs` says of a file system, in bytes.
public struct FileSystemSpace: Sendable, Equatable {
    /// Bytes an unprivileged writer may still use (`f_bavail` × `f_frsize`).
    public var availableBytes: UInt64
    /// The file system's size (`f_blocks` × `f_frsize`).
    public var totalBytes: UInt64

    public init(availableBytes: UInt64, totalBytes: UInt64) {
        self.availableBytes = availableBytes
        self.totalBytes = totalBytes
    }
}

/// A regular file as `lstat` sees it: enough to tell that the file at a path is still the one
/// that was there (a file replaced, rewritten or touched since differs in one of these).
public struct FileIdentity: Sendable, Equatable {
    public var device: UInt64
    public var inode: UInt64
    public var size: UInt64
    /// Last modification, nanoseconds since the epoch.
    public var modifiedNanoseconds: Int64

    public init(device: UInt64, inode: UInt64, size: UInt64, modifiedNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    /// The regular file at `path` (links not followed), or nil when there is none there.
    public init?(regularFileAt path: String) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        self.init(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: UInt64(info.st_size),
            modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }
}

extension FileSystem {
    /// The space on the file system holding `path` (a file or folder that exists), or the
    /// system's error.
    public static func space(at path: String) -> Result<FileSystemSpace, SystemError> {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return .failure(.current) }
        let unit = UInt64(info.f_frsize == 0 ? info.f_bsize : info.f_frsize)
        return .success(
            FileSystemSpace(availableBytes: UInt64(info.f_bavail) * unit, totalBytes: UInt64(info.f_blocks) * unit))
    }
}
