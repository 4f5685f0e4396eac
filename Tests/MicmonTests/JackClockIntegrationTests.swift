import Jack
import Platform
import Testing

/// The capture callback reads CLOCK_MONOTONIC_RAW directly when it is JACK's clock: on a server with
/// the default (system) clock source the check must say so, and the two must agree.
extension JackIntegrationTests {
    @Suite("JACK's clock against CLOCK_MONOTONIC_RAW")
    struct JackClockIntegrationTests {
        @Test("on the default clock source, CLOCK_MONOTONIC_RAW in µs reads as JACK's clock")
        func systemClockIsJackClock() throws {
            // The shared server's source client is open in this process, so libjack's clock is set up.
            _ = try SharedTestServer.require()
            #expect(JackClock.systemClockIsJackClock())
            for _ in 0 ..< 100 {
                let before = JackClock.now()
                let system = MonotonicClock.rawMicroseconds()
                let after = JackClock.now()
                #expect(system + 1 >= before && system <= after + 1, "jack \(before)…\(after), system \(system)")
            }
        }
    }
}
