import Engine
import Foundation
import Platform
import Testing

/// `PrivateJackServer` (the demo's server and the tests' own): a jackd that runs but never
/// answers is replaced once, and what it said is kept; one that never answers is an error that
/// names the last probe.
extension JackIntegrationTests {
    @Suite("Private jackd start")
    struct PrivateJackServerTests {
        /// What a hanging jackd runs: a sleep no other process runs.
        static let hang = "sleep 59.\(getpid())"

        /// A jackd that hangs (sleeps) on its first `hangs` runs, then is jackd.
        static func hangingJackd(hangs: Int) throws -> String {
            let folder = TestEnvironment.scratchFolder("hanging-jackd")
            let script = folder + "/jackd"
            let real = try #require(Child.findExecutable("jackd"))
            let text = """
                #!/bin/sh
                runs=$(cat '\(folder)/runs' 2>/dev/null || echo 0)
                echo $((runs + 1)) > '\(folder)/runs'
                if [ "$runs" -lt \(hangs) ]; then echo "hanging jackd $runs"; exec \(hang); fi
                exec '\(real)' "$@"
                """
            return try Self.executable(text, at: script)
        }

        /// `text` written to `path` as an executable script; returns `path`.
        static func executable(_ text: String, at path: String) throws -> String {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            return path
        }

        @Test("a jackd that never answers is stopped and started again; the first one's words are kept")
        func restartsAHangingServer() throws {
            let server = try PrivateJackServer(
                name: "micmon-hang-\(getpid())", timeout: 2, jackdPath: Self.hangingJackd(hangs: 1))
            defer { server.stop() }
            let why = try #require(server.firstStartFailure, "the hanging first jackd went unnoticed")
            #expect(why.contains("did not answer within 2 s"), "\(why)")
            #expect(why.contains("hanging jackd 0"), "jackd's words are missing: \(why)")
            #expect(why.contains("last probe: jack_lsp exit"), "the probe's outcome is missing: \(why)")
            #expect(server.isRunning)
            #expect(Shell.run("pgrep", "-f", Self.hang) == 1, "the hanging jackd was left running")
            #expect(Shell.run("jack_lsp", "-s", server.name) == 0, "the second jackd does not answer")
        }

        /// A jack_lsp that aborts, as libjack's client now and then does in malloc.
        static func abortingProbe() throws -> String {
            let script = TestEnvironment.scratchFolder("aborting-probe") + "/jack_lsp"
            return try Self.executable(
                "#!/bin/sh\necho 'Fatal glibc error: malloc assertion failure' >&2\nkill -ABRT $$\n", at: script)
        }

        @Test("a probe that crashes while jackd listens on its socket: started, and the crash is kept")
        func crashingProbeOnAListeningServer() throws {
            let server = try PrivateJackServer(
                name: "micmon-abortprobe-\(getpid())", timeout: 5, probePath: Self.abortingProbe())
            defer { server.stop() }
            let crash = try #require(server.probeCrash, "the probe's crash went unnoticed")
            #expect(crash.contains("signal 6") && crash.contains("malloc assertion"), "\(crash)")
            #expect(server.firstStartFailure == nil)
            #expect(Shell.run("jack_lsp", "-s", server.name) == 0, "the server does not answer")
        }

        @Test("a probe that crashes while nothing listens: not started")
        func crashingProbeWithoutAServer() throws {
            let probe = try Self.abortingProbe()
            let hanging = try Self.hangingJackd(hangs: 2)
            #expect {
                _ = try PrivateJackServer(
                    name: "micmon-abortprobe2-\(getpid())", timeout: 1, jackdPath: hanging, probePath: probe)
            } throws: { error in
                "\(error)".contains("did not answer within 1 s") && "\(error)".contains("jack_lsp signal 6")
            }
            #expect(Shell.run("pgrep", "-f", Self.hang) == 1, "a hanging jackd was left running")
        }

        @Test("a jackd that hangs twice: did not start, naming the last probe; nothing left running")
        func givesUpAfterTwoHangs() throws {
            let script = try Self.hangingJackd(hangs: 2)
            #expect {
                _ = try PrivateJackServer(name: "micmon-hang2-\(getpid())", timeout: 1, jackdPath: script)
            } throws: { error in
                let text = "\(error)"
                return text.contains("did not answer within 1 s") && text.contains("hanging jackd 1")
                    && text.contains("last probe: jack_lsp exit")
            }
            #expect(Shell.run("pgrep", "-f", Self.hang) == 1, "a hanging jackd was left running")
        }
    }
}
