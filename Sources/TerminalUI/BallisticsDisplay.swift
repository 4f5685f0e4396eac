// A standard meter's readings (`--meter ppm1|ppm2a|ppm2b|vu|k12|k14|k20`) as the display, the
// JSON lines and the summary show them. Pure values; any thread.
import DSP

/// One standard meter over the inputs: its type, and a reading per channel on the type's scale.
public struct BallisticsDisplay: Sendable, Equatable {
    public struct Channel: Sendable, Equatable {
        public var name: String
        /// On the type's scale: PPM marks (ppm2a), dB (ppm1, ppm2b), VU, or K units.
        public var reading: Double
        /// The highest reading so far.
        public var maxReading: Double
        /// K meters only: the peak section on the same scale.
        public var peakReading: Double?

        public init(name: String, reading: Double, maxReading: Double, peakReading: Double? = nil) {
            self.name = name
            self.reading = reading
            self.maxReading = maxReading
            self.peakReading = peakReading
        }
    }

    public var type: MeterType
    public var channels: [Channel]

    public init(type: MeterType, channels: [Channel]) {
        self.type = type
        self.channels = channels
    }

    /// From the published states, one per input.
    public init(type: MeterType, names: [String], meters: [BallisticMeter]) {
        let isK = type == .k12 || type == .k14 || type == .k20
        self.init(
            type: type,
            channels: zip(names, meters).map { name, meter in
                Channel(
                    name: name, reading: meter.reading(type), maxReading: meter.maxReading(type),
                    peakReading: isK ? meter.peakReading(type) : nil)
            })
    }

    /// The JSON object (`meter` lines' and the summary's `ballistics`).
    func json(includesNow: Bool) -> JSONObject {
        var object = JSONObject()
        object.string("type", type.rawValue)
        object.string("unit", type.unit)
        object.number("reference_dbfs", type.referenceDBFS, decimals: 1)
        object.objects(
            "channels",
            channels.map { c in
                var channel = JSONObject()
                channel.string("name", c.name)
                if includesNow { channel.number("reading", max(c.reading, -999), decimals: 2) }
                channel.number("max_reading", max(c.maxReading, -999), decimals: 2)
                if let peak = c.peakReading, includesNow {
                    channel.number("peak_reading", max(peak, -999), decimals: 2)
                }
                return channel
            })
        return object
    }
}
