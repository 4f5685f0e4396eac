// The process environment, read-only. Any non-realtime thread.

import Glibc

public enum Environment {
    /// The value of `name`, or nil when it is unset.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Whether `name` is set to exactly `expected`.
    public static func isSet(_ name: String, to expected: String) -> Bool { value(name) == expected }

    /// This process's real user ID.
    public static var userID: UInt32 { getuid() }

    /// The folder for temporary files: `$TMPDIR`, else /tmp, with a trailing slash.
    public static var temporaryFolder: String {
        let folder = value("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return folder.hasSuffix("/") ? folder : folder + "/"
    }
}
