import CSndFile

/// A libsndfile failure. `message` is libsndfile's own text (`sf_strerror`).
public struct SoundFileError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Operation: String, Sendable {
        case open, write, read, seek, close, command
    }
    public let operation: Operation
    public let path: String
    public let message: String

    public init(_ operation: Operation, path: String, message: String) {
        self.operation = operation
        self.path = path
        self.message = message
    }

    /// Reads libsndfile's message for `file` (or for the last failed `sf_open` when nil).
    static func fromLibrary(_ operation: Operation, path: String, file: OpaquePointer?) -> SoundFileError {
        let text = sf_strerror(file).map { String(cString: $0) } ?? "unknown libsndfile error"
        return SoundFileError(operation, path: path, message: text)
    }

    public var description: String { "\(path): cannot \(operation.rawValue): \(message)" }
}
