// The session core: one JACK client with one kernel plugged in. It opens the client, registers
// the notification callbacks (once, here, for every kind of session), owns the kernel and its
// memory (prepared before activation, freed after close), resolves ports, and runs the stop
// handshake with the realtime thread. Capture, playback and latency are kernels plus their thin
// process glue; a new kind of session is one more. Main thread only.

import Jack
import Realtime

/// A JACK client running one kernel. Make it, prepare the kernel's memory through `memory`, build
/// the kernel around `link`, `install` it with its process glue, `activate`, then `stop` and
/// `close`. Main thread only.
final class JackSession<Kernel> {
    let client: JackClient
    let sampleRate: Int
    let memory: SessionMemory
    /// What every kernel keeps (see `SessionLink`).
    let link: SessionLink
    private var kernel: UnsafeMutablePointer<Kernel>?
    /// Set by `activate()` (before it can fail): a stop must then run the handshake.
    private(set) var isStarted = false

    /// Opens the client (never starting a server) and registers every notification callback,
    /// with the session state as their context.
    init(clientName: String, serverName: String?) throws(JackError) {
        client = try JackClient(name: clientName, serverName: serverName)
        sampleRate = client.sampleRate
        memory = SessionMemory(sampleRate: sampleRate)
        link = memory.link(client: client.handle, readsSystemClock: JackClock.systemClockIsJackClock())
        let context = UnsafeMutableRawPointer(memory.state)
        try client.setXrunCallback(sessionXrun, context: context)
        try client.setBufferSizeCallback(sessionBufferSize, context: context)
        try client.setSampleRateCallback(sessionSampleRate, context: context)
        try client.setThreadInitCallback(sessionThreadInit, context: context)
        try client.setPortRegistrationCallback(sessionPortRegistration, context: context)
        try client.setPortConnectCallback(sessionPortConnect, context: context)
        client.setShutdownCallback(sessionShutdown, context: context)
    }

    deinit {
        close()
        if let kernel {
            kernel.deinitialize(count: 1)
            kernel.deallocate()
        }
    }

    /// Puts the kernel in memory of its own and registers `process` (its glue) with it as the
    /// context. Once, before `activate()`.
    @discardableResult
    func install(_ kernel: Kernel, process: JackProcessCallback) throws(JackError) -> UnsafeMutablePointer<Kernel> {
        precondition(self.kernel == nil, "a session runs one kernel")
        let pointer = UnsafeMutablePointer<Kernel>.allocate(capacity: 1)
        pointer.initialize(to: kernel)
        self.kernel = pointer
        try client.setProcessCallback(process, context: UnsafeMutableRawPointer(pointer))
        return pointer
    }

    /// Starts the callbacks.
    func activate() throws(JackError) {
        isStarted = true
        try client.activate()
    }

    /// The stop handshake: asks the kernel to stop and waits (up to `timeout` seconds) for a
    /// cycle to confirm it; a server that runs no cycle (stalled) has its callbacks stopped
    /// outright. Returns at once when never started or when the server is gone. Safe to call twice.
    func stop(timeout: Double = 1.0) {
        memory.requestStop()
        guard isStarted, !memory.serverIsGone else { return }
        if !memory.awaitStop(timeout: timeout) { client.deactivate() }
    }

    /// Deactivates and closes the client (also after the server went away). Safe to call twice.
    func close() {
        if !memory.serverIsGone { client.deactivate() }
        client.close()
    }

    /// The server's ports now, for the resolver.
    func portCatalog() -> PortSelection.Catalog {
        PortSelection.Catalog(
            inputs: client.portNames(direction: .input), outputs: client.portNames(direction: .output),
            physicalInputs: client.portNames(direction: .input, physicalOnly: true),
            physicalOutputs: client.portNames(direction: .output, physicalOnly: true))
    }

    /// Registers `prefix_1 … prefix_count`.
    func registerPorts(_ prefix: String, count: Int, direction: PortDirection) throws(JackError) -> [JackPort] {
        var ports: [JackPort] = []
        for index in 0 ..< count {
            ports.append(try client.registerPort(name: "\(prefix)_\(index + 1)", direction: direction))
            registeredPortCount += 1
        }
        return ports
    }

    /// Ports `registerPorts` has registered so far (what a full port table left room for).
    private(set) var registeredPortCount = 0
}
