import DSP
import Foundation
import Testing

@testable import TerminalUI

/// Names a port may have: quotes, backslashes, control characters, non-ASCII.
let awkwardNames = [
    "plain", "say \"hi\"", #"back\slash"#, "tab\there\nnew\r", "\u{0}\u{1}\u{1B}[31m\u{1F}", "\u{7F}del",
    "mïc:càpture_1", "マイク:入力", "🎤:out", "sep\u{2028}\u{2029}", "/slash", "",
]

@Suite struct JSONWriter {
    @Test func escapingKnownAnswers() {
        #expect(JSON.quoted("") == #""""#)
        #expect(JSON.quoted(#"say "hi""#) == #""say \"hi\"""#)
        #expect(JSON.quoted(#"a\b"#) == #""a\\b""#)
        #expect(JSON.quoted("\u{0}\u{9}\u{A}\u{1B}\u{1F}") == #""\u0000\u0009\u000a\u001b\u001f""#)
        // Non-ASCII, DEL and U+2028 pass through as UTF-8.
        #expect(JSON.quoted("é日🎤\u{7F}\u{2028}") == "\"é日🎤\u{7F}\u{2028}\"")
        #expect(Array(JSON.quoted("é").utf8) == [0x22, 0xC3, 0xA9, 0x22])
    }

    @Test("every string round-trips through a JSON parser", arguments: awkwardNames)
    func roundTrip(_ name: String) throws {
        var object = JSONObject(type: "test")
        object.string("name", name)
        object.strings("ports", [name, name])
        let text = object.text
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 })
        let parsed = try parse(text)
        #expect(parsed["name"] as? String == name)
        #expect(parsed["ports"] as? [String] == [name, name])
    }

    @Test func objectShape() throws {
        var inner = JSONObject()
        inner.integer("n", -3)
        var object = JSONObject(type: "t")
        object.number("x", 1.23456, decimals: 2)
        object.number("nan", .nan, decimals: 1)
        object.number("none", nil, decimals: 1)
        object.integer("count", UInt64(7))
        object.integer("missing", Int?.none)
        object.bool("yes", true)
        object.string("nothing", nil)
        object.object("inner", inner)
        object.object("empty", nil)
        object.objects("list", [inner, JSONObject()])
        object.numbers("times", [0.5, .infinity], decimals: 3)
        #expect(
            object.text
                == #"{"type":"t","schema":1,"x":1.23,"nan":null,"none":null,"count":7,"missing":null,"yes":true,"#
                + #""nothing":null,"inner":{"n":-3},"empty":null,"list":[{"n":-3},{}],"times":[0.500,null]}"#)
        _ = try parse(object.text)
        #expect(JSONObject().text == "{}")
    }

    @Test("every top-level object carries type then schema 1, and port names round-trip", arguments: awkwardNames)
    func everyObjectType(_ name: String) throws {
        let channel = ChannelDisplay(name: name, peakDBFS: -1, holdDBFS: -1, rmsDBFS: -3)
        var objects = [
            JSONLines.meter(
                channels: [channel],
                status: MeterStatus(
                    elapsedSeconds: 1, sampleRate: 48000, isRecording: true,
                    fileName: name)),
            SummaryFormatter.json(
                SessionSummary(
                    durationSeconds: 1, frames: 48000, sampleRate: 48000,
                    channels: [.init(name: name, maxPeakDBFS: 0, meanRMSDBFS: -3, clipCount: 0)],
                    filePath: name, exitReason: .readFailed(name))),
            InputRouteChange(kind: .sourceGone, input: "in_1", ports: [name], seconds: 1.2345).json,
            PlaybackReport.json(
                .init(
                    reason: .readFailed(name), framesPlayed: 48000, sampleRate: 48000, framesStarved: 0,
                    xruns: 0)),
        ]
        var figures = latencyFigures
        figures.serverName = name
        figures.roundTrip?.sendPort = name
        objects.append(LatencyReport.json(figures, reason: .readFailed(name)))
        let types = ["meter", "summary", "event", "summary", "latency"]
        for (text, type) in zip(objects, types) {
            #expect(text.hasPrefix("{\"type\":\"\(type)\",\"schema\":1,"), "\(text)")
            #expect(!text.contains("\n"))
            let object = try parse(text)
            #expect(object["schema"] as? Int == JSON.schemaVersion)
        }
        #expect((try parse(objects[0])["channels"] as? [[String: Any]])?.first?["name"] as? String == name)
        #expect(try parse(objects[0])["file"] as? String == name)
        #expect(try parse(objects[1])["reason"] as? String == name)
        #expect(try parse(objects[2])["ports"] as? [String] == [name])
        #expect(try parse(objects[3])["reason"] as? String == name)
        #expect(try parse(objects[4])["server"] as? String == name)
        #expect((try parse(objects[4])["round_trip"] as? [String: Any])?["send"] as? String == name)
    }
}

@Suite struct StopReasons {
    @Test func texts() {
        let all: [(StopReason, String)] = [
            (.durationReached, "duration reached"), (.endOfFile, "end of file"), (.interrupted, "interrupted (SIGINT)"),
            (.terminated, "terminated (SIGTERM)"), (.serverGone, "the JACK server went away"),
            (.sampleRateChanged, "the server's sample rate changed"), (.fileFailed, "the file could not be written"),
            (.routeLost, "route lost"),
            (.serverStalled, "the server stopped running process cycles"), (.readFailed("disk gone"), "disk gone"),
        ]
        for (reason, text) in all { #expect(reason.text == text) }
        #expect(Set(all.map(\.1)).count == all.count)
    }

    @Test func serverHint() {
        #expect(
            Messages.startServer(server: "default")
                == "start a server first (e.g. `jackd -d alsa`, or `jackd -d dummy` without a sound card), or try `micmon demo`"
        )
        #expect(
            Messages.startServer(server: "studio")
                == "start a server first (e.g. `jackd -n studio -d alsa`, or `jackd -n studio -d dummy` without a sound card), "
                + "or try `micmon demo`")
    }
}

@Suite struct PlaybackAndRouteText {
    @Test func playback() {
        #expect(
            PlaybackReport.positionLine(isPaused: false, seconds: 72.35, totalSeconds: 120, path: "song.wav")
                == "01:12.3 / 02:00.0  song.wav")
        #expect(
            PlaybackReport.positionLine(isPaused: true, seconds: 1, totalSeconds: nil, path: "a\u{1B}b")
                == "PAUSED 00:01.0 / ∞  a?b")
        #expect(
            PlaybackReport.routeLost(at: 1.25, ports: ["a:in", "b:in"], pauses: true)
                == "00:01.2 route lost: a:in, b:in went away; paused")
        #expect(
            PlaybackReport.routeLost(at: 1.25, ports: ["a:in"], pauses: false)
                == "00:01.2 route lost: a:in went away; stopping")
        #expect(PlaybackReport.routeRestored(at: 3, ports: ["a:in"]) == "00:03.0 route back: a:in; resumed")
        let summary = PlaybackReport.Summary(
            reason: .endOfFile, framesPlayed: 72_000, sampleRate: 48000, framesStarved: 5,
            xruns: 1)
        #expect(
            PlaybackReport.text(summary) == """
                Playback summary
                  ended:     end of file
                  played:    72000 frames (1.500 s) at 48000 Hz
                  starved:   5 frames
                  xruns:     1
                """)
        #expect(
            PlaybackReport.json(summary)
                == #"{"type":"summary","schema":1,"reason":"end of file","frames_played":72000,"#
                + #""duration_s":1.500,"sample_rate":48000,"frames_starved":5,"xruns":1,"non_finite_replaced":0,"#
                + #""missed_gap_count":0,"frames_missed":0,"missed_gaps":[],"timeline_jitter":0}"#)
        // A late play on PipeWire: the periods that did not reach the outputs, placed, and the late cycles.
        var late = summary
        late.framesMissed = 512
        late.missedGapCount = 2
        late.missedGaps = [.init(startFrame: 12288, length: 256), .init(startFrame: 24576, length: 256)]
        late.lateCycles = 2
        #expect(
            PlaybackReport.text(late).hasSuffix(
                """
                  missed:    512 frames in 2 gaps (the server ran them before micmon's output reached it)
                    at 0.256 s (frame 12288): 256 frames (5.3 ms)
                    at 0.512 s (frame 24576): 256 frames (5.3 ms)
                  late:      2 cycles micmon ran late (PipeWire): a late period never reached the outputs when \
                the next call repeated its position (in missed), and may not have when it was entered a period late \
                (in unsure)
                """))
        #expect(
            PlaybackReport.json(late).hasSuffix(
                #""missed_gap_count":2,"frames_missed":512,"missed_gaps":[{"start_frame":12288,"length":256,"#
                    + #""start_s":0.256,"length_ms":5.3},{"start_frame":24576,"length":256,"start_s":0.512,"#
                    + #""length_ms":5.3}],"timeline_jitter":0,"late_cycles":2}"#))
        // A period entered late, which reached the outputs only if the whole graph was as late.
        var unsure = late
        unsure.framesUncertain = 256
        unsure.uncertainGapCount = 1
        unsure.uncertainGaps = [.init(startFrame: 48000, length: 256)]
        unsure.lateCycles = 3
        #expect(
            PlaybackReport.text(unsure).contains(
                """
                  unsure:    256 frames in 1 period entered a period late: lost unless the whole graph ran that late \
                too (PipeWire does not tell)
                    at 1.000 s (frame 48000): 256 frames (5.3 ms)
                  late:      3 cycles
                """))
        #expect(
            PlaybackReport.json(unsure).hasSuffix(
                #""length_ms":5.3}],"uncertain_gap_count":1,"frames_uncertain":256,"uncertain_gaps":[{"#
                    + #""start_frame":48000,"length":256,"start_s":1.000,"length_ms":5.3}],"timeline_jitter":0,"#
                    + #""late_cycles":3}"#))
    }

    @Test func routeChanges() {
        let gone = InputRouteChange(kind: .sourceGone, input: "in_1", ports: ["system:capture_1"], seconds: 1.2349)
        #expect(gone.text == "[1.234 s] in_1: source system:capture_1 went away; reading silence until it returns")
        #expect(
            gone.json == #"{"type":"event","schema":1,"time":1.234,"event":"source_gone","input":"in_1","#
                + #""ports":["system:capture_1"]}"#)
        let back = InputRouteChange(kind: .sourceBack, input: "in_2", ports: ["x:y"], seconds: 0)
        #expect(back.text == "[0.000 s] in_2: source x:y is back; reconnected")
        let changed = InputRouteChange(kind: .connectionsChanged, input: "in_1", ports: [], seconds: 2)
        #expect(changed.text == "[2.000 s] in_1: connections changed by another client; now (none)")
        #expect(
            InputRouteChange(kind: .connectionsChanged, input: "in_1", ports: ["a", "b\u{7}"], seconds: 2).text
                == "[2.000 s] in_1: connections changed by another client; now a, b?")
    }

    @Test func liveScreen() {
        var screen = LiveScreen()
        #expect(screen.redraw(["a", "b"]) == "\r\u{1B}[2Ka\n\r\u{1B}[2Kb\n")
        #expect(screen.redraw(["c"]) == "\u{1B}[2A\r\u{1B}[2Kc\n")
        screen.forgetDrawing()
        #expect(screen.redraw(["d"]) == "\r\u{1B}[2Kd\n")
        #expect(LiveScreen.overwrite("x") == "\r\u{1B}[2Kx")
    }
}
