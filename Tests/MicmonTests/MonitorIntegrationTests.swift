import DSP
import Foundation
import Glibc
import Testing

/// Monitoring against a real server: the output must be this cycle's input.
extension JackIntegrationTests {
    @Suite("Monitoring against a real JACK server")
    struct MonitorIntegrationTests {
        /// Records micmon's out_1 on the recorder's in_1 and the source's out_1 directly on in_2,
        /// while micmon monitors the source; returns both, from where micmon's output starts.
        static func monitorAgainstDirect(_ extra: [String], name: String, seconds: Double = 2)
            throws -> (monitored: [Float], direct: [Float], result: MicmonProcess.Result)
        {
            let server = try SharedTestServer.require()
            let recorder = try TestRecorder(
                serverName: server.name, clientName: name + "-rec", capacityFrames: server.sampleRate * 20)
            try recorder.client.connect(source: server.source.outputPorts[0], destination: recorder.inputPorts[1])
            let result = try MicmonProcess.run(
                extra + [
                    "-s", server.name, "-n", name, "-p", server.source.outputPorts[0], "-p",
                    server.source.outputPorts[1],
                    "-o", recorder.inputPorts[0], "--duration", String(seconds), "--json",
                ], timeout: 30)
            let (left, right) = recorder.finish()
            let first = left.firstIndex { $0 != 0 } ?? left.count
            let last = (left.lastIndex { $0 != 0 } ?? 0) + 1
            return (Array(left[first ..< max(first, last)]), Array(right[first ..< max(first, last)]), result)
        }

        @Test("monitor passes the input through unchanged, in the same cycle (zero added latency)")
        func passThroughIsIdenticalAndImmediate() throws {
            let rate = try SharedTestServer.require().sampleRate
            let (monitored, direct, result) = try Self.monitorAgainstDirect(["monitor"], name: "mon-exact")
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(monitored.count >= rate, "only \(monitored.count) monitored frames")
            let differing = zip(monitored, direct).filter { $0 != $1 }.count
            #expect(differing == 0, "\(differing) frames differ between the monitor output and the direct signal")
        }

        @Test("--gain scales the monitor output")
        func gainScales() throws {
            let rate = try SharedTestServer.require().sampleRate
            let (monitored, direct, result) = try Self.monitorAgainstDirect(
                ["monitor", "--gain", "-6"], name: "mon-gain", seconds: 1)
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let gain = Float(pow(10, -6.0 / 20))
            #expect(monitored.count >= rate / 2, "only \(monitored.count) monitored frames")
            #expect(zip(monitored, direct).allSatisfy { abs($0 - $1 * gain) <= 1e-6 })
        }

        @Test("record --monitor records sample-exact while the outputs carry the input")
        func recordWhileMonitoring() throws {
            let path = TestEnvironment.scratchFolder("recmon") + "/take.wav"
            let rate = try SharedTestServer.require().sampleRate
            let (monitored, direct, result) = try Self.monitorAgainstDirect(
                ["record", path, "--monitor"], name: "recmon")
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(monitored.count >= rate, "only \(monitored.count) monitored frames")
            #expect(zip(monitored, direct).allSatisfy { $0 == $1 })
            let outcome = try TakeCheck.verify(path: path)
            #expect(outcome.frameCount == 2 * rate)
            #expect(outcome.isExact, "first mismatch at frame \(outcome.firstMismatch ?? -1)")
        }
    }
}
