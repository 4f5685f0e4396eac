import DSP
import Engine
import Jack

typealias TestSignal = ReferenceSignal

/// The test source is micmon's own source client playing `ReferenceSignal` (counted from its
/// first cycle), so tests, the soak and the demo share one implementation.
typealias TestSignalSource = DemoSource

extension DemoSource {
    /// A `ReferenceSignal` source for tests.
    static func reference(serverName: String, clientName: String = "micmon-test-source") throws -> DemoSource {
        try DemoSource(serverName: serverName, clientName: clientName, signal: .reference)
    }
}
