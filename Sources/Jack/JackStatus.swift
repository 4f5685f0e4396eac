// `jack_status_t` and the typed errors made from it, with libjack's meaning in words. Any thread.

import CJack

/// The bits of `jack_status_t`, as named Swift values.
public struct JackStatus: OptionSet, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let failure = JackStatus(rawValue: JackFailure.rawValue)
    public static let invalidOption = JackStatus(rawValue: JackInvalidOption.rawValue)
    public static let nameNotUnique = JackStatus(rawValue: JackNameNotUnique.rawValue)
    public static let serverStarted = JackStatus(rawValue: JackServerStarted.rawValue)
    public static let serverFailed = JackStatus(rawValue: JackServerFailed.rawValue)
    public static let serverError = JackStatus(rawValue: JackServerError.rawValue)
    public static let noSuchClient = JackStatus(rawValue: JackNoSuchClient.rawValue)
    public static let loadFailure = JackStatus(rawValue: JackLoadFailure.rawValue)
    public static let initFailure = JackStatus(rawValue: JackInitFailure.rawValue)
    public static let shmFailure = JackStatus(rawValue: JackShmFailure.rawValue)
    public static let versionError = JackStatus(rawValue: JackVersionError.rawValue)
    public static let backendError = JackStatus(rawValue: JackBackendError.rawValue)
    public static let clientZombie = JackStatus(rawValue: JackClientZombie.rawValue)

    private static let names: [(JackStatus, String)] = [
        (.failure, "JackFailure"), (.invalidOption, "JackInvalidOption"),
        (.nameNotUnique, "JackNameNotUnique"), (.serverStarted, "JackServerStarted"),
        (.serverFailed, "JackServerFailed"), (.serverError, "JackServerError"),
        (.noSuchClient, "JackNoSuchClient"), (.loadFailure, "JackLoadFailure"),
        (.initFailure, "JackInitFailure"), (.shmFailure, "JackShmFailure"),
        (.versionError, "JackVersionError"), (.backendError, "JackBackendError"),
        (.clientZombie, "JackClientZombie"),
    ]

    /// The set bits by their libjack names, e.g. `JackFailure|JackServerFailed`.
    public var description: String {
        let set = Self.names.filter { contains($0.0) }.map(\.1)
        return set.isEmpty ? "0" : set.joined(separator: "|")
    }
}

/// What went wrong talking to libjack. The message names the call and the status bits it returned.
public enum JackError: Error, Sendable, CustomStringConvertible, Equatable {
    /// `jack_client_open` failed; `status` holds the bits libjack set.
    case serverUnavailable(server: String, status: JackStatus)
    case openFailed(server: String, status: JackStatus)
    case portRegistrationFailed(port: String)
    case callbackRegistrationFailed(callback: String, code: Int32)
    case activationFailed(code: Int32)
    case connectionFailed(source: String, destination: String, code: Int32)
    case noSuchPort(name: String)

    public var description: String {
        switch self {
        case .serverUnavailable(let server, let status):
            return "cannot connect to the JACK server '\(server)' (\(status)): is it running?"
        case .openFailed(let server, let status):
            return "jack_client_open on server '\(server)' failed (\(status))"
        case .portRegistrationFailed(let port):
            return "jack_port_register failed for port '\(port)'"
        case .callbackRegistrationFailed(let callback, let code):
            return "\(callback) failed (error \(code))"
        case .activationFailed(let code):
            return "jack_activate failed (error \(code))"
        case .connectionFailed(let source, let destination, let code):
            return "jack_connect \(source) -> \(destination) failed (error \(code))"
        case .noSuchPort(let name):
            return "no JACK port named '\(name)'"
        }
    }
}
