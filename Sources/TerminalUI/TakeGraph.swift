// A picture of a take as SVG (`micmon report --svg`, `record --report`): per channel, level over
// time (peak and RMS envelopes on a dB axis), short-term loudness, clips, and the take's markers
// (drops, server gaps, marks) along the time axis. Plus the markers' sidecar file, read back.
// Pure; any thread.
import DSP

/// Something that happened at a place in the take: a drop (silence written for lost frames), a
/// server gap (cycles the server ran without micmon), or a mark someone set.
public struct TakeMarker: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case drop
        case serverGap = "server_gap"
        case mark
    }

    public var kind: Kind
    public var startSeconds: Double
    public var lengthSeconds: Double
    public var label: String

    public init(kind: Kind, startSeconds: Double, lengthSeconds: Double = 0, label: String = "") {
        self.kind = kind
        self.startSeconds = startSeconds
        self.lengthSeconds = lengthSeconds
        self.label = label
    }

    /// The markers of a take's sidecar (`FILE.json`, docs/json.md "take sidecar"): an object with
    /// a `markers` array, each entry a `kind` and a place, `start_s` (seconds) or `start_frame`
    /// (frames at `sample_rate`, the sidecar's own or else `sampleRate`), optionally `length_s`
    /// or `length` (frames) and `label`. Unknown kinds and keys are ignored. nil when the bytes
    /// are not such an object.
    public static func parseSidecar(_ bytes: [UInt8], sampleRate: Int) -> [TakeMarker]? {
        guard let root = JSONValue.parse(bytes), let list = root["markers"]?.array else { return nil }
        let rate = root["sample_rate"]?.number ?? Double(sampleRate)
        guard rate > 0 else { return nil }
        return list.compactMap { entry in
            guard let name = entry["kind"]?.string, let kind = Kind(rawValue: name) else { return nil }
            guard let start = entry["start_s"]?.number ?? entry["start_frame"]?.number.map({ $0 / rate }),
                start.isFinite, start >= 0
            else { return nil }
            let length = entry["length_s"]?.number ?? entry["length"]?.number.map { $0 / rate } ?? 0
            return TakeMarker(
                kind: kind, startSeconds: start, lengthSeconds: length.isFinite ? max(0, length) : 0,
                label: entry["label"]?.string ?? "")
        }
    }
}

/// The SVG picture of an analysed take (one with envelopes: `TakeAnalyzer(keepsEnvelope: true)`).
public enum TakeGraph {
    public static let width = 1000.0
    static let left = 70.0
    static let right = 20.0
    static let top = 56.0
    static let panelHeight = 170.0
    static let panelGap = 46.0
    /// The dB axis: 0 at the top, −60 at the bottom (anything lower is drawn on the bottom line).
    static let floorDB = -60.0

    static let peakColour = "#3b78c2"
    static let rmsColour = "#1d5e2f"
    static let loudnessColour = "#e07b00"
    static let clipColour = "#d00000"

    /// The picture's height for `channels` panels.
    public static func height(channels: Int) -> Double {
        top + Double(max(channels, 1)) * (panelHeight + panelGap) + 10
    }

    public static func svg(_ a: TakeAnalysisResult, title: String, markers: [TakeMarker] = []) -> String {
        let plotWidth = width - left - right
        let duration = max(a.durationSeconds, 1e-3)
        let totalHeight = height(channels: a.channels.count)
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(totalHeight))\" "
        out += "viewBox=\"0 0 \(n(width)) \(n(totalHeight))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        out += "<rect x=\"0\" y=\"0\" width=\"\(n(width))\" height=\"\(n(totalHeight))\" fill=\"#ffffff\"/>\n"
        out += "<text x=\"\(n(left))\" y=\"18\" font-size=\"14\" font-weight=\"bold\">\(escaped(title))</text>\n"
        let subtitle =
            TextFormat.fixed(a.durationSeconds, decimals: 3) + " s at \(a.sampleRate) Hz; loudness "
            + a.loudnessMode + (a.correlation.map { "; correlation " + AnalysisFormat.correlation($0) } ?? "")
        out += "<text x=\"\(n(left))\" y=\"34\">\(escaped(subtitle))</text>\n"
        out += legend(y: 48)

        let timeStep = Self.timeStep(duration)
        for (index, channel) in a.channels.enumerated() {
            let y0 = top + Double(index) * (panelHeight + panelGap)
            out += "<g class=\"channel\" id=\"channel-\(index + 1)\">\n"
            out += "<rect x=\"\(n(left))\" y=\"\(n(y0))\" width=\"\(n(plotWidth))\" height=\"\(n(panelHeight))\" "
            out += "fill=\"#f7f7f7\" stroke=\"#999999\"/>\n"
            // dB axis: ticks, grid and labels every 10 dB.
            var db = 0.0
            while db >= floorDB {
                let y = yFor(db, y0)
                out += "<line x1=\"\(n(left))\" y1=\"\(n(y))\" x2=\"\(n(left + plotWidth))\" y2=\"\(n(y))\" "
                out += "stroke=\"#dddddd\"/>\n"
                out +=
                    "<line x1=\"\(n(left - 4))\" y1=\"\(n(y))\" x2=\"\(n(left))\" y2=\"\(n(y))\" stroke=\"#333333\"/>\n"
                out +=
                    "<text x=\"\(n(left - 6))\" y=\"\(n(y + 4))\" text-anchor=\"end\">\(TextFormat.fixed(db, decimals: 0))</text>\n"
                db -= 10
            }
            let middle = y0 + panelHeight / 2
            out += "<text x=\"16\" y=\"\(n(middle))\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(n(middle)))\">"
            out += "dBFS / LUFS</text>\n"
            out += "<text x=\"\(n(left + 4))\" y=\"\(n(y0 + 13))\" font-weight=\"bold\">"
            out += escaped(channel.name) + "</text>\n"
            // Time axis under the panel.
            let yAxis = y0 + panelHeight
            var t = 0.0
            while t <= duration + 1e-9 {
                let x = left + t / duration * plotWidth
                out +=
                    "<line x1=\"\(n(x))\" y1=\"\(n(yAxis))\" x2=\"\(n(x))\" y2=\"\(n(yAxis + 4))\" stroke=\"#333333\"/>\n"
                out += "<text x=\"\(n(x))\" y=\"\(n(yAxis + 16))\" text-anchor=\"middle\">"
                out += timeLabel(t, duration: duration) + "</text>\n"
                t += timeStep
            }
            out += "<text x=\"\(n(left + plotWidth / 2))\" y=\"\(n(yAxis + 32))\" text-anchor=\"middle\">"
            out += duration >= 120 ? "time (min:s)" : "time (s)"
            out += "</text>\n"

            let statistics = channel.statistics
            let peaks = columns(statistics.envelopePeak.map { Decibels.amplitudeToDBFS(Double($0)) }, plotWidth, max)
            let rms = columns(
                statistics.envelopeMeanSquare.map { Decibels.meanSquareToDBFS(Double($0)) }, plotWidth, max)
            out += polyline(peaks, y0: y0, plotWidth: plotWidth, colour: peakColour, extra: "class=\"peak\"")
            out += polyline(rms, y0: y0, plotWidth: plotWidth, colour: rmsColour, extra: "class=\"rms\"")
            for programme in a.programmes where programme.channels.contains(index) {
                let loudness = columns(
                    programme.shortTermEnvelope.map { $0.isFinite ? Double($0) : Decibels.floor }, plotWidth, max)
                out += polyline(
                    loudness, y0: y0, plotWidth: plotWidth, colour: loudnessColour,
                    extra: "class=\"short-term\" stroke-dasharray=\"5 3\"")
            }
            for start in statistics.clipStarts {
                let x = left + Double(start) / Double(max(a.sampleRate, 1)) / duration * plotWidth
                out += "<rect class=\"clip\" x=\"\(n(x - 1))\" y=\"\(n(y0))\" width=\"2\" height=\"8\" "
                out += "fill=\"\(clipColour)\"/>\n"
            }
            for marker in markers {
                out += draw(marker, y0: y0, plotWidth: plotWidth, duration: duration)
            }
            out += "</g>\n"
        }
        out += "</svg>\n"
        return out
    }

    static func legend(y: Double) -> String {
        var out = ""
        var x = left
        for (name, colour, dash) in [
            ("peak", peakColour, ""), ("RMS (100 ms)", rmsColour, ""),
            ("short-term loudness (LUFS)", loudnessColour, " stroke-dasharray=\"5 3\""),
        ] {
            out +=
                "<line x1=\"\(n(x))\" y1=\"\(n(y - 4))\" x2=\"\(n(x + 18))\" y2=\"\(n(y - 4))\" stroke=\"\(colour)\" "
            out += "stroke-width=\"2\"\(dash)/>\n"
            out += "<text x=\"\(n(x + 22))\" y=\"\(n(y))\">\(name)</text>\n"
            x += 40 + Double(name.count) * 6
        }
        out += "<rect x=\"\(n(x))\" y=\"\(n(y - 9))\" width=\"3\" height=\"9\" fill=\"\(clipColour)\"/>\n"
        out += "<text x=\"\(n(x + 8))\" y=\"\(n(y))\">clip</text>\n"
        x += 50
        for kind in TakeMarker.Kind.allCases {
            out += "<line x1=\"\(n(x))\" y1=\"\(n(y - 10))\" x2=\"\(n(x))\" y2=\"\(n(y))\" stroke=\"\(colour(kind))\" "
            out += "stroke-width=\"2\"/>\n"
            out += "<text x=\"\(n(x + 5))\" y=\"\(n(y))\">\(kind.rawValue.replacingUnderscores())</text>\n"
            x += 80
        }
        return out
    }

    static func colour(_ kind: TakeMarker.Kind) -> String {
        switch kind {
        case .drop: return "#d00000"
        case .serverGap: return "#8a2be2"
        case .mark: return "#555555"
        }
    }

    static func draw(_ marker: TakeMarker, y0: Double, plotWidth: Double, duration: Double) -> String {
        let x = left + min(max(marker.startSeconds / duration, 0), 1) * plotWidth
        let w = max(1.5, min(marker.lengthSeconds / duration * plotWidth, plotWidth))
        var out = "<rect class=\"marker \(marker.kind.rawValue)\" x=\"\(n(x))\" y=\"\(n(y0))\" width=\"\(n(w))\" "
        out += "height=\"\(n(panelHeight))\" fill=\"\(colour(marker.kind))\" fill-opacity=\"0.45\"/>\n"
        if !marker.label.isEmpty {
            out += "<text x=\"\(n(x + 3))\" y=\"\(n(y0 + panelHeight - 4))\" fill=\"\(colour(marker.kind))\">"
            out += escaped(marker.label) + "</text>\n"
        }
        return out
    }

    /// `values` folded into at most `count` columns (each column the `combine` of its values).
    static func columns(_ values: [Double], _ count: Double, _ combine: (Double, Double) -> Double) -> [Double] {
        let columns = Int(count)
        guard values.count > columns, columns > 0 else { return values }
        var out = [Double](repeating: -Double.infinity, count: columns)
        for (index, value) in values.enumerated() {
            let column = index * columns / values.count
            out[column] = combine(out[column], value)
        }
        return out
    }

    static func yFor(_ db: Double, _ y0: Double) -> Double {
        let clamped = min(max(db.isFinite ? db : floorDB, floorDB), 0)
        return y0 + (0 - clamped) / -floorDB * panelHeight
    }

    static func polyline(_ values: [Double], y0: Double, plotWidth: Double, colour: String, extra: String) -> String {
        guard !values.isEmpty else { return "" }
        let step = plotWidth / Double(values.count)
        var points: [String] = []
        points.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            points.append(n(left + (Double(index) + 0.5) * step) + "," + n(yFor(value, y0)))
        }
        return "<polyline \(extra) fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.2\" points=\""
            + points.joined(separator: " ") + "\"/>\n"
    }

    /// A step giving at most about ten ticks.
    static func timeStep(_ duration: Double) -> Double {
        let steps = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200]
        return steps.first { duration / $0 <= 10 } ?? 14400
    }

    static func timeLabel(_ t: Double, duration: Double) -> String {
        guard duration >= 120 else { return TextFormat.fixed(t, decimals: t.rounded() == t ? 0 : 2) }
        let seconds = Int(t.rounded())
        return "\(seconds / 60):" + TextFormat.pad(String(seconds % 60), 2, with: "0")
    }

    /// A coordinate with one decimal.
    static func n(_ value: Double) -> String { TextFormat.fixed(value, decimals: 1) }

    /// Text safe inside XML: &, <, >, " and ' as entities, control characters dropped.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                if scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value) || scalar.value == 0xFFFE
                    || scalar.value == 0xFFFF
                {
                    continue
                }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? " " : $0 })
    }
}
