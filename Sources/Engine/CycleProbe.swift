// A read-only view of a session's cycle counter and server state for a thread other than the
// main one (micmon's wall-clock watchdog): atomics only. Any thread, while the session lives.

/// What a watchdog thread may read of a running session: how many process cycles have run and
/// whether the server has gone. Made by the session (`CaptureSession.cycleProbe`); valid until
/// the session is released, so whoever reads it on another thread stops reading (joins that
/// thread) before letting the session go.
public struct CycleProbe: @unchecked Sendable {
    private let state: UnsafeMutablePointer<SessionState>

    init(state: UnsafeMutablePointer<SessionState>) {
        self.state = state
    }

    /// Process cycles run so far (written only by the realtime thread).
    public var cycles: UInt64 {
        // SAFETY: the state outlives every reader (see the type's rule); the field is atomic.
        state.pointee.cycles.load(ordering: .relaxed)
    }

    /// Whether the server shut down or kicked the client out.
    public var serverIsGone: Bool {
        // SAFETY: as `cycles`.
        state.pointee.serverIsGone.load(ordering: .acquiring)
    }
}
