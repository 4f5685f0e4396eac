// What a path names, without opening it: the entry itself (lstat) or what it leads to (stat),
// its identity (device and inode), and whether its folder can take a new file. For checking an
// output path before anything is created. Any non-realtime thread.

import Glibc

/// A directory entry as `lstat` (or `stat`, following links) sees it. Never opens the path, so
/// looking at a FIFO or a device does not block or touch it.
public struct PathEntry: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case regular = "a regular file"
        case directory = "a directory"
        case symbolicLink = "a symbolic link"
        case fifo = "a FIFO"
        case characterDevice = "a character device"
        case blockDevice = "a block device"
        case socket = "a socket"
        case other = "not a regular file"
    }

    public let kind: Kind
    public let device: UInt64
    public let inode: UInt64

    /// Nil when nothing is there (or it cannot be looked at); `SystemError.current` says why.
    /// `followingLinks` false looks at a symbolic link itself.
    public init?(path: String, followingLinks: Bool) {
        var info = stat()
        let code = followingLinks ? stat(path, &info) : lstat(path, &info)
        guard code == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    public var isDirectory: Bool { kind == .directory }

    /// Whether both name the same file (same device and inode), through whatever paths.
    public func isSameFile(as other: PathEntry) -> Bool { device == other.device && inode == other.inode }
}

extension FileSystem {
    /// Why a new file cannot be created in `folder`, without creating one: a read-only mount
    /// (`statvfs`, which root's `access` does not see), no write or search permission, or a
    /// virtual file system (proc, sysfs) that holds no files. Nil when it can.
    public static func creationProblem(inFolder folder: String) -> String? {
        var place = stat()
        if stat(folder, &place) == 0 {
            for virtual in ["/proc", "/sys"] {
                var mount = stat()
                if stat(virtual, &mount) == 0 && mount.st_dev == place.st_dev {
                    return "\(folder) is on \(virtual), a virtual file system that holds no files"
                }
            }
        }
        var volume = statvfs()
        if statvfs(folder, &volume) == 0 && volume.f_flag & UInt(ST_RDONLY) != 0 {
            return SystemError(code: EROFS).description
        }
        if access(folder, W_OK | X_OK) != 0 { return SystemError.current.description }
        return nil
    }
}
