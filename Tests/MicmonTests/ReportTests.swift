import Engine
import Foundation
import Platform
import SoundFile
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `micmon report`: text, JSON and the SVG picture (parsed as XML, rendered by rsvg-convert), the
/// sidecar's markers, and bad input (one line, exit 64 or 74, nothing half-written).
@Suite("micmon report")
struct ReportTests {
    static let rsvg = Child.findExecutable("rsvg-convert")
    static let ffmpeg = Child.findExecutable("ffmpeg")

    /// A 6 s stereo float file: a −6 dBFS-peak 997 Hz sine on channel 1, its inverse on channel 2,
    /// with 3 clipped samples in a row at 2 s and one at 4 s on channel 1.
    static func writeTestFile(_ path: String, encoding: SampleEncoding = .float) throws {
        let rate = 48000
        var samples: [Float] = []
        for frame in 0 ..< (6 * rate) {
            var x = Float(0.5 * sin(2 * Double.pi * 997 * Double(frame) / Double(rate)))
            let y = -x
            if (2 * rate ..< 2 * rate + 3).contains(frame) || frame == 4 * rate { x = 1 }
            samples += [x, y]
        }
        let writer = try SoundFileWriter(
            path: path, format: AudioFileFormat(container: .wav, encoding: encoding), sampleRate: rate, channelCount: 2)
        try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0) }
        try writer.close()
    }

    static func object(_ line: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func textAndJSON() throws {
        let folder = TestEnvironment.scratchFolder("report")
        let path = folder + "/take.wav"
        try Self.writeTestFile(path)
        let text = try MicmonProcess.run(["report", path])
        #expect(text.exitCode == 0, "\(text.stderr)")
        #expect(text.stdout.contains("take.wav: 6.000 s, 288000 frames at 48000 Hz, 2 channels"))
        #expect(text.stdout.contains("correlation: -1.00"))

        let json = try MicmonProcess.run(["report", "--json", path])
        #expect(json.exitCode == 0)
        let report = try Self.object(json.stdout.trimmingCharacters(in: .newlines))
        #expect(report["type"] as? String == "report")
        #expect(report["schema"] as? Int == 1)
        #expect(report["frames"] as? Int == 288000)
        let channels = try #require(report["channels"] as? [[String: Any]])
        #expect(channels.count == 2)
        #expect(channels[0]["clips"] as? Int == 2, "runs of full-scale samples, not samples")
        #expect(channels[0]["clipped_samples"] as? Int == 4)
        #expect(channels[1]["clips"] as? Int == 0)
        #expect(abs((channels[1]["sample_peak_dbfs"] as? Double ?? 0) - -6.02) < 0.02)
        #expect(abs((channels[1]["rms_dbfs"] as? Double ?? 0) - -9.03) < 0.02)
        #expect(abs(channels[1]["dc_offset"] as? Double ?? 1) < 1e-4)
        let correlation = try #require(report["correlation"] as? Double)
        #expect(correlation < -0.99)
        let programmes = try #require(report["programmes"] as? [[String: Any]])
        // A −6 dBFS-peak sine alone, K-weighted at 997 Hz: −9.03 − 0.69 + 0.69 ≈ −9.0 LUFS.
        #expect(abs((programmes[1]["integrated_lufs"] as? Double ?? 0) - -9.03) < 0.15)
    }

    /// Pixels of a PNG, as 8-bit grey, through ffmpeg: (width, height, pixels).
    static func greyPixels(_ png: String) throws -> (Int, Int, [UInt8]) {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: try #require(ffmpeg))
        let raw = png + ".gray"
        probe.arguments = [
            "-hide_banner", "-loglevel", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "gray", raw,
        ]
        try probe.run()
        probe.waitUntilExit()
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        // The PNG's own header gives its size: IHDR width and height, big-endian, at bytes 16 and 20.
        let header = try Data(contentsOf: URL(fileURLWithPath: png))
        func be32(_ offset: Int) -> Int { header[offset ..< offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20), Array(data))
    }

    @Test(.enabled(if: TestEnvironment.runs(needing: rsvg != nil && ffmpeg != nil)))
    func pictureIsValidXMLAndRenders() throws {
        let rsvg = try TestEnvironment.executable("rsvg-convert", hint: "Debian: librsvg2-bin")
        _ = try TestEnvironment.executable("ffmpeg", hint: "Debian: ffmpeg")
        let folder = TestEnvironment.scratchFolder("report-svg")
        let path = folder + "/take.wav"
        try Self.writeTestFile(path)
        // The sidecar the take's markers come from (FILE.json).
        try
            #"{"markers":[{"kind":"drop","start_frame":96000,"length":4800},{"kind":"server_gap","start_s":3.5,"length_s":0.05},{"kind":"mark","start_s":5,"label":"applause & <laughter>"}]}"#
            .write(toFile: path + ".json", atomically: true, encoding: .utf8)
        let svg = folder + "/take.svg"
        let result = try MicmonProcess.run(["report", path, "--svg", svg])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: svg))
        let parser = XMLParser(data: data)
        #expect(parser.parse(), "not well-formed XML: \(String(describing: parser.parserError))")
        let text = String(decoding: data, as: UTF8.self)
        for piece in [
            "class=\"peak\"", "class=\"rms\"", "class=\"short-term\"", "class=\"clip\"", "marker drop",
            "marker server_gap", "marker mark", "applause &amp; &lt;laughter&gt;", "time (s)", "dBFS / LUFS",
        ] {
            #expect(text.contains(piece), "the picture lacks \(piece)")
        }
        #expect(text.components(separatedBy: "class=\"clip\"").count - 1 == 2, "one mark per clip on channel 1")

        let png = folder + "/take.png"
        let render = Process()
        render.executableURL = URL(fileURLWithPath: rsvg)
        render.arguments = [svg, "-o", png]
        try render.run()
        render.waitUntilExit()
        #expect(render.terminationStatus == 0)
        let (width, height, pixels) = try Self.greyPixels(png)
        #expect(width == 1000)
        #expect(height == 56 + 2 * (170 + 46) + 10)
        #expect(pixels.count == width * height)
        let inked = pixels.filter { $0 < 200 }.count
        #expect(inked > pixels.count / 100, "the picture is (nearly) blank: \(inked) dark pixels")
        #expect(Set(pixels).count > 8, "the picture has too few tones to be a drawing")
    }

    @Test func badInput() throws {
        let folder = TestEnvironment.scratchFolder("report-bad")
        let text = folder + "/notes.txt"
        try "not audio\n".write(toFile: text, atomically: true, encoding: .utf8)
        let empty = folder + "/empty.wav"
        let writer = try SoundFileWriter(
            path: empty, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 48000, channelCount: 2)
        try writer.close()
        let nan = folder + "/nan.wav"
        var samples = [Float](repeating: 0.1, count: 2 * 4800)
        samples[2 * 1000 + 1] = .nan
        let nanWriter = try SoundFileWriter(
            path: nan, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 48000, channelCount: 2)
        try samples.withUnsafeBufferPointer { try nanWriter.write(interleaved: $0) }
        try nanWriter.close()
        let inf = folder + "/inf.wav"
        samples[2 * 1000 + 1] = -.infinity
        let infWriter = try SoundFileWriter(
            path: inf, format: AudioFileFormat(container: .wav, encoding: .float), sampleRate: 48000, channelCount: 2)
        try samples.withUnsafeBufferPointer { try infWriter.write(interleaved: $0) }
        try infWriter.close()

        for (file, words) in [
            (text, "cannot open"), (empty, "no audio frames"), (nan, "not a number"), (inf, "not a number"),
        ] {
            let svg = folder + "/out-\(URL(fileURLWithPath: file).lastPathComponent).svg"
            let result = try MicmonProcess.run(["report", file, "--svg", svg])
            #expect(result.exitCode == 64, "\(file): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(result.stderr.contains(words), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: svg), "nothing is written for bad input")
        }
        #expect(try file(nan, says: "sample 1000 of channel 2"), "the NaN's place is named")

        // A good file, an SVG path that cannot be written: exit 74, one line, nothing left over.
        let good = folder + "/good.wav"
        try Self.writeTestFile(good)
        let result = try MicmonProcess.run(["report", good, "--svg", folder + "/missing/folder/take.svg"])
        #expect(result.exitCode == 74, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("partial") }
        #expect(left.isEmpty, "left behind: \(left)")
        // Unknown --loudness-mode: exit 64 with the list.
        let mode = try MicmonProcess.run(["report", good, "--loudness-mode", "5.1"])
        #expect(mode.exitCode == 64)
        #expect(mode.stderr.contains("per-channel, dual-mono, stereo"))
    }

    private func file(_ path: String, says words: String) throws -> Bool {
        try MicmonProcess.run(["report", path]).stderr.contains(words)
    }
}

extension JackIntegrationTests {
    /// Live and offline agree: the summary of a live take (its `analysis`) equals `micmon report`
    /// of the file it wrote, number for number, and `record --report` leaves the same report and
    /// a picture beside the take.
    @Suite("Live loudness equals the report of the take")
    struct LiveReportTests {
        @Test func summaryEqualsReport() throws {
            let server = try SharedTestServer.require()
            let folder = TestEnvironment.scratchFolder("live-report")
            let path = folder + "/take.wav"
            let result = try MicmonProcess.run(
                [
                    "record", path, "-s", server.name, "-n", "rec-live-report", "-p", server.source.outputPorts[0],
                    "-p", server.source.outputPorts[1], "--duration", "4", "--json", "--report",
                ], timeout: 60)
            #expect(result.exitCode == 0, "\(result.stderr)")
            let summaryLine = try #require(result.stdout.split(separator: "\n").last { $0.contains("\"summary\"") })
            let summary = try ReportTests.object(String(summaryLine))
            let live = try #require(summary["analysis"] as? [String: Any])
            #expect(summary["analysis_frames_missed"] as? Int == 0)

            let report = try MicmonProcess.run(["report", "--json", path])
            #expect(report.exitCode == 0, "\(report.stderr)")
            let offline = try ReportTests.object(report.stdout.trimmingCharacters(in: .newlines))
            #expect(Self.withoutNames(live) == Self.withoutNames(offline))
            #expect((live["frames"] as? Int) == 4 * server.sampleRate)

            // record --report: the same report beside the take, and its picture.
            let beside = try String(contentsOfFile: path + ".report.json", encoding: .utf8)
            let besideObject = try ReportTests.object(beside.trimmingCharacters(in: .newlines))
            #expect(Self.withoutNames(besideObject) == Self.withoutNames(offline))
            let svg = try Data(contentsOf: URL(fileURLWithPath: path + ".report.svg"))
            #expect(XMLParser(data: svg).parse())
        }

        /// `--meter`: the standard meter's readings in every meter line and its highest in the
        /// summary, for each recorded channel.
        @Test func standardMeterInJSON() throws {
            let server = try SharedTestServer.require()
            let result = try MicmonProcess.run(
                [
                    "meter", "-s", server.name, "-n", "meter-ppm", "-p", server.source.outputPorts[0], "-p",
                    server.source.outputPorts[1], "--duration", "1", "--json", "--meter", "ppm2b",
                ], timeout: 60)
            #expect(result.exitCode == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let meterLine = try #require(lines.last { $0.contains("\"type\":\"meter\"") })
            let meter = try ReportTests.object(meterLine)
            let live = try #require(meter["ballistics"] as? [String: Any])
            #expect(live["type"] as? String == "ppm2b")
            #expect(live["reference_dbfs"] as? Double == -18)
            #expect((live["channels"] as? [[String: Any]])?.count == 2)
            let summary = try ReportTests.object(try #require(lines.last { $0.contains("\"summary\"") }))
            let ballistics = try #require(summary["ballistics"] as? [String: Any])
            let channels = try #require(ballistics["channels"] as? [[String: Any]])
            #expect(channels.map { $0["name"] as? String } == ["in_1", "in_2"])
            // The test signal is far above silence: the highest reading is on the scale.
            for channel in channels { #expect((channel["max_reading"] as? Double ?? -999) > -40) }
        }

        /// The analysis keys, names and the file left out (the live names are the ports'), as text.
        static func withoutNames(_ object: [String: Any]) -> String {
            var copy = object
            copy["type"] = nil
            copy["schema"] = nil
            copy["file"] = nil
            for key in ["channels", "programmes"] {
                copy[key] = (copy[key] as? [[String: Any]])?.map { entry -> [String: Any] in
                    var entry = entry
                    entry["name"] = nil
                    return entry
                }
            }
            let data = try? JSONSerialization.data(withJSONObject: copy, options: [.sortedKeys])
            return data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
    }
}
