// An errno value with the system's words for it. Any thread but the realtime one.

import Glibc

public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32
    public init(code: Int32) { self.code = code }

    /// The calling thread's `errno`, as it is now.
    public static var current: SystemError { SystemError(code: errno) }

    /// `strerror`'s text.
    public var description: String { String(cString: strerror(code)) }

    public static let fileExists = SystemError(code: EEXIST)
    public static let noSuchFile = SystemError(code: ENOENT)
    public static let interrupted = SystemError(code: EINTR)
}
