// Shell-style patterns (`fnmatch`), as users write JACK port names: `system:capture_*`.
// Pure; any non-realtime thread.

import Glibc

public enum ShellPattern {
    /// Whether `text` holds a pattern character (`*`, `?`, `[`) rather than being an exact name.
    public static func isPattern(_ text: String) -> Bool {
        text.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    /// Whether `name` matches `pattern` (`fnmatch` with no flags: `*` crosses `:` and `/`).
    public static func matches(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }
}
