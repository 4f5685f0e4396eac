import CSndFile
import Glibc

/// A libsndfile failure. `message` is libsndfile's own text (`sf_strerror`).
public struct SoundFileError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Operation: String, Sendable {
        case create, open, write, read, seek, close, command
        /// The format, codec or its settings refused for this rate and channel count.
        case format
    }
    public let operation: Operation
    public let path: String
    public let message: String
    /// The system's `errno` when the system refused (creating the file), else 0.
    public let systemCode: Int32

    public init(_ operation: Operation, path: String, message: String, systemCode: Int32 = 0) {
        self.operation = operation
        self.path = path
        self.message = message
        self.systemCode = systemCode
    }

    /// Something was already at the path when the file was to be created exclusively (another
    /// recorder created it since the path was checked).
    public var isAlreadyThere: Bool { systemCode == EEXIST }

    /// What is at the path is a file another writer still holds (its lock): not replaced.
    public var isInUse: Bool { systemCode == EBUSY }
    /// A stream whose reader went away (EPIPE: a closed pipe).
    public var isClosedPipe: Bool { systemCode == EPIPE }

    /// Reads libsndfile's message for `file` (or for the last failed `sf_open` when nil).
    static func fromLibrary(_ operation: Operation, path: String, file: OpaquePointer?) -> SoundFileError {
        let text = sf_strerror(file).map { String(cString: $0) } ?? "unknown libsndfile error"
        return SoundFileError(operation, path: path, message: text)
    }

    /// The container or codec cannot hold what was asked (a usage error, not an I/O one).
    public var isFormatRefusal: Bool { operation == .format }

    public var description: String {
        if operation == .format { return "\(path): \(message)" }
        return "\(path): cannot \(operation.rawValue): \(message)"
    }
}
