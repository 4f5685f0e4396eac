import CJack
import CJackShims
import Glibc

/// C function types for the callbacks a `JackClient` hands to libjack. They are plain Swift
/// types so that callers never import CJack; `context` is the pointer given at registration.
public typealias JackProcessCallback = @convention(c) (UInt32, UnsafeMutableRawPointer?) -> Int32
public typealias JackFrameCountCallback = @convention(c) (UInt32, UnsafeMutableRawPointer?) -> Int32
public typealias JackNotifyCallback = @convention(c) (UnsafeMutableRawPointer?) -> Int32
public typealias JackThreadInitCallback = @convention(c) (UnsafeMutableRawPointer?) -> Void
/// (port id, 1 registered / 0 unregistered, context). JACK's notification thread.
public typealias JackPortRegistrationCallback = @convention(c) (UInt32, Int32, UnsafeMutableRawPointer?) -> Void
/// (port id a, port id b, 1 connected / 0 disconnected, context). JACK's notification thread.
public typealias JackPortConnectCallback = @convention(c) (UInt32, UInt32, Int32, UnsafeMutableRawPointer?) -> Void
/// (status bits, reason, context); may run on any thread, even the realtime one.
public typealias JackShutdownCallback = @convention(c) (UInt32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

public enum PortDirection: Sendable {
    case input, output
}

/// Which way a port latency is measured (`jack_latency_callback_mode_t`).
public enum JackLatencyMode: Sendable {
    /// From the capture hardware to the port.
    case capture
    /// From the port to the playback hardware.
    case playback
}

/// A port latency range as JACK reports it, in frames.
public struct JackLatencyRange: Sendable, Equatable {
    public let min: Int
    public let max: Int
    public init(min: Int, max: Int) {
        self.min = min
        self.max = max
    }
}

/// A registered port of this client. `handle` is what the realtime glue passes to
/// `JackPortBuffer.samples(_:frames:)`.
public struct JackPort: @unchecked Sendable {
    public let handle: OpaquePointer
    public let fullName: String
    public let shortName: String
}

/// Port buffers, for the realtime glue: the only libjack call made on the process thread.
public enum JackPortBuffer {
    /// The port's sample buffer for this cycle. Realtime thread, inside the process callback only.
    /// Inlinable, so the glue calls libjack directly.
    @inlinable
    public static func samples(_ port: OpaquePointer, frames: UInt32) -> UnsafeMutablePointer<Float> {
        // SAFETY: libjack returns a buffer of `frames` floats for an audio port during the cycle.
        return jack_port_get_buffer(port, frames).assumingMemoryBound(to: Float.self)
    }

    /// The buffer an input port gives before the client is active. On PipeWire's libjack that is
    /// the port's own silent buffer, the very one a cycle gets when the port holds no data from
    /// its peers (the peer's period was already taken): comparing against it tells such a cycle
    /// from one that carried data. Main thread, before activation.
    public static func idleBuffer(_ port: OpaquePointer, frames: UInt32) -> UnsafePointer<Float> {
        // SAFETY: libjack returns a buffer of at least `frames` floats for an audio input port.
        UnsafePointer(jack_port_get_buffer(port, frames).assumingMemoryBound(to: Float.self))
    }
}

/// A JACK client: the Swift face of `jack_client_t`. Create, register ports and callbacks, and
/// activate from one (main) thread; the realtime callbacks are plain C function pointers.
public final class JackClient: @unchecked Sendable {
    public let handle: OpaquePointer
    /// The server this client is connected to ("default" when none was named).
    public let serverName: String
    private var isActive = false
    private var isClosed = false

    /// Opens a client. Never starts a server (`JackNoStartServer`). Main thread.
    public init(name: String, serverName: String? = nil) throws(JackError) {
        _ = libraryMessagesRouted
        var status = jack_status_t(0)
        let options = jack_options_t(JackNoStartServer.rawValue)
        let client = micmon_jack_client_open(name, options, &status, serverName)
        let bits = JackStatus(rawValue: status.rawValue)
        let server = serverName ?? JackClient.defaultServerName
        guard let client else {
            if bits.contains(.serverFailed) || bits.contains(.serverError) {
                throw .serverUnavailable(server: server, status: bits)
            }
            throw .openFailed(server: server, status: bits)
        }
        self.handle = client
        self.serverName = server
    }

    /// The longest client name JACK takes, in bytes: `jack_client_name_size()` less its NUL.
    /// Any thread (libjack returns a constant).
    public static var maximumNameLength: Int { Int(jack_client_name_size()) - 1 }

    /// Why JACK cannot take `name` as a client name (empty, or longer than
    /// `maximumNameLength` bytes), in JACK's terms; nil when it can. Checked before a client is
    /// opened, because `jack_client_open` answers a long name with the same failure bits as a
    /// server that is not running. Any thread.
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a JACK client name cannot be empty" }
        let bytes = name.utf8.count
        guard bytes > maximumNameLength else { return nil }
        return "JACK takes client names of at most \(maximumNameLength) bytes (jack_client_name_size), "
            + "this one has \(bytes)"
    }

    /// The server name libjack uses when none is given (`$JACK_DEFAULT_SERVER` or "default").
    public static var defaultServerName: String {
        if let env = getenv("JACK_DEFAULT_SERVER"), env.pointee != 0 { return String(cString: env) }
        return "default"
    }

    /// The loaded libjack's version text (`jack_get_version_string`): "1.9.21" from jackd2's,
    /// "3.0.0.0 (using PipeWire 0.3.65)" from PipeWire's (what `pw-jack` loads).
    public static var libraryVersion: String {
        guard let text = jack_get_version_string() else { return "" }
        return String(cString: text)
    }

    /// Whether the loaded libjack is PipeWire's: the "server" is then a PipeWire graph, whose
    /// behaviour differs from jackd's in ways docs/platforms.md lists.
    public static var isPipeWire: Bool { libraryVersion.split(separator: " ").contains { $0 == "PipeWire" } }

    deinit { close() }

    /// The client's actual name (libjack may have made it unique).
    public var name: String { String(cString: jack_get_client_name(handle)) }
    public var sampleRate: Int { Int(jack_get_sample_rate(handle)) }
    public var bufferSize: Int { Int(jack_get_buffer_size(handle)) }
    /// The server's DSP load in percent, as `jack_cpu_load` reports it.
    public var cpuLoad: Float { jack_cpu_load(handle) }

    /// The JACK transport as of the current cycle: whether it rolls (Starting, a sync client
    /// still getting ready, is not rolling yet) and its frame. `jack_transport_query`
    /// (realtime-safe, and fine on any thread). Any thread but the realtime one here.
    public func transport() -> (isRolling: Bool, frame: UInt64) {
        var position = jack_position_t()
        let state = jack_transport_query(handle, &position)
        return (state == JackTransportRolling || state == JackTransportLooping, UInt64(position.frame))
    }

    /// Registers an audio port. Main thread, before or after activation.
    public func registerPort(name: String, direction: PortDirection) throws(JackError) -> JackPort {
        let flags = direction == .input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue
        guard let port = jack_port_register(handle, name, JACK_DEFAULT_AUDIO_TYPE, UInt(flags), 0) else {
            throw .portRegistrationFailed(port: name)
        }
        return JackPort(handle: port, fullName: String(cString: jack_port_name(port)), shortName: name)
    }

    public func setProcessCallback(_ callback: JackProcessCallback, context: UnsafeMutableRawPointer?) throws(JackError)
    {
        try check(jack_set_process_callback(handle, callback, context), "jack_set_process_callback")
    }

    public func setBufferSizeCallback(_ callback: JackFrameCountCallback, context: UnsafeMutableRawPointer?)
        throws(JackError)
    {
        try check(jack_set_buffer_size_callback(handle, callback, context), "jack_set_buffer_size_callback")
    }

    public func setSampleRateCallback(_ callback: JackFrameCountCallback, context: UnsafeMutableRawPointer?)
        throws(JackError)
    {
        try check(jack_set_sample_rate_callback(handle, callback, context), "jack_set_sample_rate_callback")
    }

    public func setXrunCallback(_ callback: JackNotifyCallback, context: UnsafeMutableRawPointer?) throws(JackError) {
        try check(jack_set_xrun_callback(handle, callback, context), "jack_set_xrun_callback")
    }

    public func setThreadInitCallback(_ callback: JackThreadInitCallback, context: UnsafeMutableRawPointer?)
        throws(JackError)
    {
        try check(jack_set_thread_init_callback(handle, callback, context), "jack_set_thread_init_callback")
    }

    public func setShutdownCallback(_ callback: JackShutdownCallback, context: UnsafeMutableRawPointer?) {
        // SAFETY: jack_status_t is a C enum of UInt32 raw values; the two function types have one ABI.
        let cCallback = unsafeBitCast(callback, to: JackInfoShutdownCallback.self)
        jack_on_info_shutdown(handle, cCallback, context)
    }

    public func setPortRegistrationCallback(_ callback: JackPortRegistrationCallback, context: UnsafeMutableRawPointer?)
        throws(JackError)
    {
        try check(jack_set_port_registration_callback(handle, callback, context), "jack_set_port_registration_callback")
    }

    public func setPortConnectCallback(_ callback: JackPortConnectCallback, context: UnsafeMutableRawPointer?)
        throws(JackError)
    {
        try check(jack_set_port_connect_callback(handle, callback, context), "jack_set_port_connect_callback")
    }

    /// Turns a libjack registration result into a typed error naming the call.
    private func check(_ code: Int32, _ call: String) throws(JackError) {
        if code != 0 { throw .callbackRegistrationFailed(callback: call, code: code) }
    }

    public func activate() throws(JackError) {
        let code = jack_activate(handle)
        if code != 0 { throw .activationFailed(code: code) }
        isActive = true
    }

    /// Stops the callbacks. Safe to call twice; after a server shutdown it only marks the state.
    public func deactivate() {
        guard isActive, !isClosed else { return }
        isActive = false
        jack_deactivate(handle)
    }

    /// Closes the client (also after the server went away, as libjack asks). Main thread.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        isActive = false
        jack_client_close(handle)
    }

    /// Port names matching the filters, in libjack's order. `namePattern` is a regular expression.
    public func portNames(namePattern: String? = nil, direction: PortDirection? = nil, physicalOnly: Bool = false)
        -> [String]
    {
        var flags: UInt = 0
        if let direction { flags |= UInt(direction == .input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue) }
        if physicalOnly { flags |= UInt(JackPortIsPhysical.rawValue) }
        guard let list = jack_get_ports(handle, namePattern, JACK_DEFAULT_AUDIO_TYPE, flags) else { return [] }
        defer { jack_free(list) }
        var names: [String] = []
        var index = 0
        while let entry = list[index] {
            names.append(String(cString: entry))
            index += 1
        }
        return names
    }

    /// Whether a port of that full name exists, and if so whether it is an output (a source).
    public func portExists(_ fullName: String) -> Bool { jack_port_by_name(handle, fullName) != nil }

    /// The latency JACK reports for a port (`jack_port_get_latency_range`), in frames: for
    /// `.capture`, how long ago what the port carries now arrived at the capture hardware; for
    /// `.playback`, how long until what is written to it now leaves the playback hardware. Nil
    /// when there is no such port.
    public func latencyRange(ofPort fullName: String, mode: JackLatencyMode) -> JackLatencyRange? {
        guard let port = jack_port_by_name(handle, fullName) else { return nil }
        var range = jack_latency_range_t(min: 0, max: 0)
        jack_port_get_latency_range(port, mode == .capture ? JackCaptureLatency : JackPlaybackLatency, &range)
        return JackLatencyRange(min: Int(range.min), max: Int(range.max))
    }

    /// The port's pretty name (JACK metadata, `JACK_METADATA_PRETTY_NAME`), or nil when none is
    /// set, it is empty, or there is no such port. It asks the server (and jack2's metadata
    /// store): main thread, never the realtime one.
    public func prettyName(ofPort fullName: String) -> String? {
        guard let port = jack_port_by_name(handle, fullName) else { return nil }
        var value: UnsafeMutablePointer<CChar>?
        var type: UnsafeMutablePointer<CChar>?
        guard jack_get_property(jack_port_uuid(port), micmon_jack_pretty_name_key(), &value, &type) == 0 else {
            return nil
        }
        defer {
            jack_free(value)
            jack_free(type)
        }
        guard let value else { return nil }
        let name = String(cString: value)
        return name.isEmpty ? nil : name
    }

    public func connect(source: String, destination: String) throws(JackError) {
        let code = jack_connect(handle, source, destination)
        // EEXIST: already connected, which is what was asked for.
        if code != 0 && code != EEXIST { throw .connectionFailed(source: source, destination: destination, code: code) }
    }

    public func disconnect(source: String, destination: String) {
        jack_disconnect(handle, source, destination)
    }

    /// Full names of the ports connected to `port`.
    public func connections(of port: JackPort) -> [String] {
        guard let list = jack_port_get_connections(port.handle) else { return [] }
        defer { jack_free(list) }
        var names: [String] = []
        var index = 0
        while let entry = list[index] {
            names.append(String(cString: entry))
            index += 1
        }
        return names
    }
}

/// libjack prints its own diagnostics ("Cannot connect to server socket ...") on stderr, which
/// would bury micmon's one-line errors; the typed `JackError` says what matters. Set
/// `MICMON_JACK_VERBOSE=1` to see them.
private let libraryMessagesRouted: Void = {
    if getenv("MICMON_JACK_VERBOSE") == nil {
        jack_set_error_function(ignoreJackMessage)
        jack_set_info_function(ignoreJackMessage)
    }
}()

/// A libjack message sink that drops the message. Any thread, the realtime one included.
private func ignoreJackMessage(_ message: UnsafePointer<CChar>?) {}
