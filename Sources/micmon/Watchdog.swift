import Platform
import Synchronization

/// Bounds a step that depends on the JACK server (closing the client): if it has not finished
/// within `seconds`, micmon says so and exits with the code it already decided on. The file is
/// finalized before this is used, so nothing is lost by leaving early. Main thread.
final class Watchdog: Sendable {
    private let isDone = Atomic<Bool>(false)

    static func run(within seconds: Double, exitCode: ExitCode, what: String, _ step: () -> Void) {
        let watchdog = Watchdog()
        let thread = WorkerThread {
            _ = waitPolling(timeout: seconds, interval: 0.05, until: { watchdog.isDone.load(ordering: .acquiring) })
            if !watchdog.isDone.load(ordering: .acquiring) {
                Console.error("micmon: warning: \(what) took longer than \(Int(seconds)) s; exiting anyway")
                ProcessExit.immediately(exitCode.rawValue)
            }
        }
        step()
        watchdog.isDone.store(true, ordering: .releasing)
        thread?.join()
    }
}
