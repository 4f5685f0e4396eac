import Glibc

/// Polls `isDone` every 2 ms until it is true (returns true), `givesUp` is true, or `timeout`
/// seconds pass (returns false). Main thread, for handshakes with the realtime side that must not
/// share a lock or condition with it.
func waitPolling(timeout: Double, until isDone: () -> Bool, givingUpIf givesUp: () -> Bool) -> Bool {
    var waited = 0.0
    while waited < timeout {
        if isDone() { return true }
        if givesUp() { return false }
        usleep(2_000)
        waited += 0.002
    }
    return false
}
