// The sidecar FILE.json of a take's file: the file's facts (format, sources, the `bext` facts
// for every container) and every event of the take it holds, at its file frame, as one JSON
// object (docs/json.md "The take sidecar"), which `micmon report --svg` also reads. Pure text;
// the writer thread writes it (`TakeMetadata.writeSidecar`).

import JSONText
import SoundFile

/// The sidecar's text.
enum Sidecar {
    static let schema = 1

    /// One JSON object, keys in a fixed order, ending with a newline.
    static func document(
        file: TakeFileMetadata, metadata: TakeMetadata, markers: [(TakeEvent, UInt64)], frames: UInt64,
        complete: Bool
    ) -> String {
        var fields: [(String, String)] = [
            ("type", quoted("take_sidecar")), ("schema", "\(schema)"),
            ("file", quoted(file.path)), ("format", quoted(file.format.container.rawValue)),
            (
                "encoding",
                quoted(file.format.container.isLossy ? file.format.container.rawValue : file.format.encoding.rawValue)
            ),
            ("sample_rate", "\(metadata.sampleRate)"), ("channels", "\(metadata.channelNames.count)"),
            ("channel_names", array(metadata.channelNames.map(quoted))),
            ("source_ports", array(metadata.sourcePorts.map(quoted))),
            ("description", quoted(metadata.options.description)),
            ("originator", quoted(metadata.options.software)),
            ("first_take_frame", "\(file.firstTakeFrame)"),
        ]
        if let time = file.origination, let reference = file.timeReference {
            let latency = metadata.clock?.captureLatencyFrames ?? 0
            fields.append(
                (
                    "origination",
                    object([
                        ("date", quoted(time.date)), ("time", quoted(time.time)), ("iso8601", quoted(time.iso8601)),
                        ("time_reference", "\(reference)"), ("capture_latency_frames", "\(latency)"),
                    ])
                ))
        } else {
            fields.append(("origination", "null"))
        }
        fields.append(("coding_history", quoted(file.codingHistory)))
        fields.append(("bext", file.hasBroadcastInfo ? "true" : "false"))
        if let error = file.broadcastInfoError { fields.append(("bext_error", quoted(error))) }
        fields.append(("cues", file.format.container.carriesCuePoints ? "true" : "false"))
        fields.append(("complete", complete ? "true" : "false"))
        fields.append(("frames", "\(frames)"))
        fields.append(("events_not_kept", "\(metadata.events.eventsNotKept)"))
        fields.append(("markers", array(markers.map { marker($0.0, fileFrame: $0.1) })))
        return object(fields) + "\n"
    }

    /// One marker: `kind`, `start_frame` (in the file), `take_frame`, and `length`, `channel`,
    /// `label` where the event has them.
    static func marker(_ event: TakeEvent, fileFrame: UInt64) -> String {
        var fields: [(String, String)] = [
            ("kind", quoted(event.kind.rawValue)), ("start_frame", "\(fileFrame)"),
            ("take_frame", "\(event.takeFrame)"),
        ]
        if event.frameCount > 0 { fields.append(("length", "\(event.frameCount)")) }
        if let channel = event.channel { fields.append(("channel", "\(channel)")) }
        if let label = event.label { fields.append(("label", quoted(label))) }
        return object(fields)
    }

    /// The text of a cue point's label: the kind, and what the event says.
    static func label(of event: TakeEvent) -> String {
        var text = event.kind.rawValue.replacingUnderscores()
        if let channel = event.channel { text += " ch\(channel)" }
        if event.frameCount > 0 { text += " \(event.frameCount) frames" }
        if let label = event.label, !label.isEmpty { text += ": " + label }
        return text
    }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    private static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }

    /// A JSON string (RFC 8259), as every JSON text micmon writes has it (`JSONText`).
    static func quoted(_ text: String) -> String { JSONText.quoted(text) }
}

extension String {
    /// `server_gap` → `server gap`.
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? " " : $0 }) }
}
