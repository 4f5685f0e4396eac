import DSP
import Foundation
import Glibc
import Platform
import SoundFile
import Testing

extension JackIntegrationTests {
    /// micmon on a netjack2 pair in two network namespaces (`NetJackPair`, `.ci/netjack2`): remote
    /// mics recorded exactly on the master and on the slave, a slave that rejoins under a new
    /// name reconnected by its pattern, a vanished slave caught by the wall-clock watchdog, and
    /// the network round trip beside jack_iodelay and JACK's own figures. Each test builds its
    /// own pair and takes it down.
    @Suite(
        "netjack2 pair in network namespaces",
        .enabled(
            if: TestEnvironment.runs(needing: NetJackPair.isAvailable),
            "needs root and iproute2 for network namespaces (CI runs as root)"))
    struct NetJackIntegrationTests {
        /// A take's samples: the silent lead-in (before the network delivers anything), then what
        /// follows checked against the reference signal.
        struct RemoteTake {
            let frames: Int
            let leadIn: Int
            let match: ReferenceSignal.Match
            var isExact: Bool { match.startFrame != nil && match.mismatchedFrames == 0 }
        }

        static func remoteTake(_ path: String) throws -> RemoteTake {
            let samples = try SoundFileReader(path: path).readAllFloats()
            let frames = samples.count / 2
            let leadIn = (0 ..< frames).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 } ?? frames
            let match = samples.withUnsafeBufferPointer {
                ReferenceSignal.match(interleaved: UnsafeBufferPointer(rebasing: $0[(2 * leadIn)...]))
            }
            return RemoteTake(frames: frames, leadIn: leadIn, match: match)
        }

        /// The segments of non-silent frames longer than 0.1 s.
        static func segments(_ samples: [Float], rate: Int) -> [Range<Int>] {
            var found: [Range<Int>] = []
            var start: Int?
            for frame in 0 ..< samples.count / 2 {
                let silent = samples[2 * frame] == 0 && samples[2 * frame + 1] == 0
                if !silent && start == nil { start = frame }
                if silent, let begun = start {
                    found.append(begun ..< frame)
                    start = nil
                }
            }
            if let begun = start { found.append(begun ..< samples.count / 2) }
            return found.filter { $0.count > rate / 10 }
        }

        @Test("a remote take is exact on the master (from the slave's client ports) and on the slave")
        func remoteTakeExact() throws {
            let pair = try NetJackPair()
            defer { pair.stop() }
            let client = try pair.startSlave()
            // The counter goes to the slave's system:playback_1/2, which carry it to the master.
            let player = try ReferencePlayer.start(server: pair.slaveName, name: "nj-source")
            defer { player.signal(SIGTERM) }
            #expect(player.waitUntilRunning(seconds: 0.5), "the player did not start: \(player.stderrSoFar)")
            let folder = TestEnvironment.scratchFolder("netjack-take")
            let seconds = 5
            let onMaster = try MicmonProcess([
                "record", folder + "/master.wav", "-s", pair.masterName, "-n", "nj-rec", "-p",
                "\(client):from_slave_1", "-p", "\(client):from_slave_2", "--duration", String(seconds), "--json",
            ])
            // Its own client name: jackd2 1.9.21 mixes up two clients of one name opened at the
            // same moment on two servers of one machine (the second fails, JackServerError).
            let onSlave = try MicmonProcess([
                "record", folder + "/slave.wav", "-s", pair.slaveName, "-n", "nj-rec-slave", "-p", "nj-source:out_1",
                "-p",
                "nj-source:out_2", "--duration", String(seconds), "--json",
            ])
            let master = onMaster.wait(timeout: 40)
            let slave = onSlave.wait(timeout: 40)
            print("netjack2: \(pair.startupText)")
            #expect(master.exitCode == 0, "master: \(master.stderr)")
            #expect(slave.exitCode == 0, "slave: \(slave.stderr)")
            // A gap micmon reports on an exact take did not happen (before the timeline rule, 4 of
            // 5 exact netjack2 takes reported one).
            for (name, result) in [("master", master), ("slave", slave)] {
                #expect(
                    PipeWireIntegrationTests.summaryNumber("server_gap_count", in: result.stdout) == 0,
                    "\(name): \(result.stdout.suffix(600))")
            }

            // On the master: the network delivers after (l+1) periods and a few hundred ms of
            // connection set-up (silence), then every frame of the counter, contiguous.
            let remote = try Self.remoteTake(folder + "/master.wav")
            #expect(remote.frames == seconds * pair.sampleRate)
            #expect(remote.leadIn < pair.sampleRate, "lead-in of \(remote.leadIn) frames before the signal")
            #expect(remote.isExact, "master take: \(remote.match), lead-in \(remote.leadIn)")
            print("netjack2 remote take: lead-in \(remote.leadIn) frames, then \(remote.frames - remote.leadIn) exact")

            // On the slave: a local client of the slave's server, exact from its first frame.
            let local = try TakeCheck.verify(path: folder + "/slave.wav")
            #expect(local.frameCount == seconds * pair.sampleRate)
            #expect(local.isExact, "slave take: \(local)")
        }

        @Test("a slave that vanishes and rejoins at once is reconnected by the -p pattern, renamed (mics-01) or not")
        func rejoinRenamed() throws {
            let pair = try NetJackPair()
            defer { pair.stop() }
            let first = try pair.startSlave(name: "mics")
            #expect(first == "mics")
            var player = try ReferencePlayer.start(server: pair.slaveName, name: "nj-source")
            defer { player.signal(SIGTERM) }
            #expect(player.waitUntilRunning(seconds: 0.5), "the player did not start: \(player.stderrSoFar)")
            let path = TestEnvironment.scratchFolder("netjack-rejoin") + "/take.wav"
            let seconds = 14
            let child = try MicmonProcess([
                "record", path, "-s", pair.masterName, "-n", "nj-rec", "-p", "mics*:from_slave_*", "--duration",
                String(seconds), "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 2.5), "micmon did not record 2.5 s: \(child.stderrSoFar)")
            // The slave vanishes and comes back at once under the same -n: netjack2 names it
            // mics-01 while the master still holds the dead client (about 2.1 s); under load the
            // master sometimes drops the dead client first, and the new one is mics again. The
            // pattern reconnects either: a new name is matched again, the old one comes back.
            let existing = Set(pair.slaveClientsOnMaster())
            pair.stopSlave(signal: SIGKILL)
            let second = try pair.startSlave(name: "mics", existing: existing)
            #expect(second.hasPrefix("mics"))
            let renamed = second != first
            print("netjack2: the rejoining slave is \(second)\(renamed ? " (renamed by the master)" : "")")
            player.signal(SIGTERM)
            _ = player.wait(timeout: 10)
            player = try ReferencePlayer.start(server: pair.slaveName, name: "nj-source")
            let reconnected =
                renamed
                ? "in_2: its pattern now matches \(second):from_slave_2" : "in_2: source \(second):from_slave_2 is back"
            #expect(child.waitUntilStderr(contains: reconnected, timeout: 20), "stderr: \(child.stderrSoFar)")
            let result = child.wait(timeout: 40)
            print("netjack2: \(pair.startupText)")
            #expect(result.exitCode != 76, "stderr: \(result.stderr)")
            let event = renamed ? "source_matched" : "source_back"
            for channel in 1 ... 2 {
                #expect(
                    result.stdout.contains(
                        "\"event\":\"\(event)\",\"input\":\"in_\(channel)\",\"ports\":[\"\(second):from_slave_\(channel)\"]"
                    ), "\(result.stdout.suffix(1500))")
            }

            // The take: the counter from the first slave, silence, the counter from the second
            // one for the rest of the take; each exact.
            let samples = try SoundFileReader(path: path).readAllFloats()
            let rate = pair.sampleRate
            let parts = Self.segments(samples, rate: rate)
            #expect(parts.count == 2, "segments: \(parts)")
            if let last = parts.last {
                #expect(last.upperBound == samples.count / 2, "the take does not end in the second slave's signal")
                #expect(last.count > 2 * rate, "only \(last.count) frames after the rejoin")
            }
            for part in parts {
                // in_1 and in_2 are connected one after the other, by the pattern at the start as
                // at the rejoin: skip 2048 frames of each segment.
                let from = part.lowerBound + 2048
                let match = samples.withUnsafeBufferPointer {
                    ReferenceSignal.match(
                        interleaved: UnsafeBufferPointer(rebasing: $0[(2 * from) ..< (2 * part.upperBound)]))
                }
                #expect(match.startFrame != nil && match.mismatchedFrames == 0, "segment \(part): \(match)")
            }
        }

        @Test(
            "a vanished slave whose client blocks the master's graph is caught by the watchdog: exit 76, take finalized"
        )
        func vanishedSlave() throws {
            let pair = try NetJackPair()
            defer { pair.stop() }
            let client = try pair.startSlave()
            let path = TestEnvironment.scratchFolder("netjack-vanish") + "/take.wav"
            let child = try MicmonProcess([
                "record", path, "-s", pair.masterName, "-n", "nj-rec", "-p", "\(client):from_slave_*", "--duration",
                "60", "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 1.5), "micmon did not record 1.5 s: \(child.stderrSoFar)")
            try pair.cutLink()
            pair.stopSlave(signal: SIGKILL)
            // Without the watchdog micmon is never called again and never ends (killed at 30 s).
            let result = child.wait(timeout: 30)
            print("netjack2: \(pair.startupText)")
            #expect(!result.wasKilledBySignal, "micmon did not end by itself")
            #expect(result.exitCode == 76, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("no process cycle for"), "stderr: \(result.stderr)")
            #expect(result.stdout.contains("\"event\":\"cycles_stopped\""))
            let summary = try #require(
                result.stdout.split(separator: "\n").last { $0.contains("\"type\":\"summary\"") })
            let frames = try #require(summary.firstMatch(of: /"frames":(\d+)/).flatMap { Int($0.output.1) })
            // The take is finalized: the file holds every frame the summary counts.
            let reader = try SoundFileReader(path: path)
            #expect(reader.frameCount == frames && frames >= 3 * pair.sampleRate / 2, "summary: \(summary)")
            #expect(summary.contains("\"frames_missing\":\(60 * pair.sampleRate - frames)"), "summary: \(summary)")
        }

        @Test("a master that vanishes under micmon on the slave: its network sources go at once, the take goes on")
        func masterVanishesUnderSlave() throws {
            let pair = try NetJackPair()
            defer { pair.stop() }
            let client = try pair.startSlave()
            // The counter plays on the master into the slave's client: on the slave it arrives on
            // system:capture_1/2.
            let player = try ReferencePlayer.start(
                server: pair.masterName, name: "nj-msource",
                destinations: ["\(client):to_slave_1", "\(client):to_slave_2"])
            defer { player.signal(SIGTERM) }
            #expect(player.waitUntilRunning(seconds: 0.5), "the player did not start: \(player.stderrSoFar)")
            let path = TestEnvironment.scratchFolder("netjack-master-gone") + "/take.wav"
            let seconds = 8
            let child = try MicmonProcess([
                "record", path, "-s", pair.slaveName, "-n", "nj-srec", "-p", "system:capture_1", "-p",
                "system:capture_2", "--duration", String(seconds), "--json",
            ])
            #expect(child.waitUntilRecorded(seconds: 3), "micmon did not record 3 s: \(child.stderrSoFar)")
            pair.killMaster()
            // The slave's net driver misses the master's packets, restarts and waits for a master
            // on its own timer: its system ports go (micmon says so) and its cycles go on (no
            // stall: the watchdog stays quiet, the take reaches its duration on delivered frames).
            #expect(
                child.waitUntilStderr(contains: "source system:capture_1 went away", timeout: 5),
                "stderr: \(child.stderrSoFar)")
            let result = child.wait(timeout: 30)
            print("netjack2: \(pair.startupText)")
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            #expect(result.stdout.contains("\"event\":\"source_gone\",\"input\":\"in_2\""), "\(result.stdout)")
            #expect(!result.stdout.contains("cycles_stopped"), "\(result.stdout)")
            // The take: what came over the network up to the master's end, then silence to the
            // end: one stretch of signal, longer than the 2 s before the kill, ending before the
            // take does. Its samples are judged by the remote-take test, not here.
            let samples = try SoundFileReader(path: path).readAllFloats()
            #expect(samples.count == 2 * seconds * pair.sampleRate)
            let parts = Self.segments(samples, rate: pair.sampleRate)
            #expect(parts.count == 1, "segments: \(parts)")
            if let part = parts.first {
                #expect(part.count > 2 * pair.sampleRate && part.upperBound < samples.count / 2, "\(part)")
                print("netjack2 master gone: signal \(part), take \(samples.count / 2) frames")
            }
        }

        @Test("latency across the network loop: micmon and jack_iodelay agree, beside what JACK reports")
        func networkRoundTrip() throws {
            let pair = try NetJackPair()
            defer { pair.stop() }
            let client = try pair.startSlave()
            // The loop: on the slave, what comes from the master goes straight back.
            for channel in 1 ... 2 {
                let looped = try Tool.run([
                    "jack_connect", "-s", pair.slaveName, "system:capture_\(channel)", "system:playback_\(channel)",
                ])
                try #require(looped.status == 0, "jack_connect on the slave: \(looped.output)")
            }
            let iodelay = try TestEnvironment.executable("jack_iodelay", hint: "Debian: jackd2")
            let folder = TestEnvironment.scratchFolder("netjack-iodelay")
            let logPath = folder + "/stdout"
            let command = (Child.findExecutable("stdbuf").map { [$0, "-oL"] } ?? []) + [iodelay]
            let anchor = try ChildProcess(
                command, environment: ["JACK_DEFAULT_SERVER": pair.masterName], stdout: logPath)
            defer {
                anchor.signal(SIGTERM)
                anchor.wait(timeout: 3)
            }
            // jack_iodelay on channel 2, micmon on channel 1, at the same time.
            #expect(
                TestEnvironment.waitUntil(timeout: 10) {
                    (try? Tool.run(["jack_lsp", "-s", pair.masterName]))?.output.contains("jack_delay:in") ?? false
                }, "jack_iodelay's ports did not appear")
            for (source, destination) in [
                ("jack_delay:out", "\(client):to_slave_2"), ("\(client):from_slave_2", "jack_delay:in"),
            ] {
                let connected = try Tool.run(["jack_connect", "-s", pair.masterName, source, destination])
                try #require(connected.status == 0, "jack_connect \(source) \(destination): \(connected.output)")
            }
            let result = try MicmonProcess.run(
                [
                    "latency", "-s", pair.masterName, "-n", "nj-lat", "--send", "\(client):to_slave_1", "--return",
                    "\(client):from_slave_1", "--duration", "4", "--json",
                ], timeout: 40)
            print("netjack2: \(pair.startupText)")
            #expect(result.exitCode == 0, "stderr: \(result.stderr)")
            let line = try #require(result.stdout.split(separator: "\n").last, "no summary: \(result.stderr)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "summary: \(line)")
            let trip = try #require(summary["round_trip"] as? [String: Any], "\(summary)")
            #expect(trip["status"] as? String == "measured", "\(trip)")
            let frames = try #require(summary["round_trip_frames"] as? [String: Any], "\(summary)")
            let mean = try #require((frames["mean"] as? NSNumber)?.doubleValue)
            let low = try #require((frames["min"] as? NSNumber)?.doubleValue)
            let high = try #require((frames["max"] as? NSNumber)?.doubleValue)
            let reported = (trip["jack_reported_frames"] as? NSNumber)?.doubleValue
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            let readings = LatencyIntegrationTests.iodelayReadings(in: text)
            try #require(readings.count >= 4, "jack_iodelay printed \(readings.count) readings: \(text.suffix(300))")
            let median = readings.sorted()[readings.count / 2]
            print(
                "netjack2 round trip: micmon \(mean) frames (min \(low), max \(high)), jack_iodelay \(median), "
                    + "JACK reports \(reported.map { String($0) } ?? "nothing"), period \(pair.periodFrames), "
                    + "latency \(pair.latencyPeriods)")
            #expect(high - low <= 0.05, "the round trip moved: \(low) … \(high)")
            #expect(abs(mean - median) <= 0.05, "micmon \(mean), jack_iodelay \(median)")
            // The network delivers after l + 1 periods of the master; JACK's latency ranges say l
            // periods, so one period is unaccounted (docs/platforms.md).
            let period = Double(pair.periodFrames)
            let latency = Double(pair.latencyPeriods)
            #expect(abs(mean - (latency + 1) * period) <= 0.05, "\(mean) frames, period \(period), latency \(latency)")
            #expect(reported == latency * period, "JACK reports \(reported.map { String($0) } ?? "nothing")")
            #expect(
                (trip["unaccounted_frames"] as? NSNumber)?.doubleValue == period, "\(trip)")
        }
    }
}
