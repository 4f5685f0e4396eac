/// Machine-readable meter output: one JSON object per line, fixed decimals, no locale, finite
/// numbers only (levels below the floor read −160). Pure; any thread.
public enum JSONLines {
    /// A meter snapshot, e.g.
    ///
    ///     {"type":"meter","schema":1,"time":1.250,"channels":[{"name":"in_1","peak_dbfs":-3.2,"rms_dbfs":-12.1,"hold_dbfs":-3.0,"clips":0,"non_finite":0,"connected":true}],"xruns":0,"frames_recorded":48000,"frames_dropped":0,"sample_rate":48000,"recording":true,"file":"take.wav"}
    ///
    /// `time` has 3 decimals, levels 1; `file` is null when there is none; `noise_reduction_db`
    /// comes last, with --denoise only. A channel with a label (`--label`, or its source's pretty
    /// name) has `"label"` after `"connected"`.
    public static func meter(channels: [ChannelDisplay], status: MeterStatus) -> String {
        let list = channels.map { c in
            var channel = JSONObject()
            channel.string("name", c.name)
            channel.decibels("peak_dbfs", c.peakDBFS, decimals: 1)
            channel.decibels("rms_dbfs", c.rmsDBFS, decimals: 1)
            channel.decibels("hold_dbfs", c.holdDBFS, decimals: 1)
            channel.integer("clips", c.clipCount)
            channel.integer("non_finite", c.nonFiniteCount)
            channel.bool("connected", c.isConnected)
            if let label = c.label { channel.string("label", label) }
            return channel
        }
        var object = JSONObject(type: "meter")
        object.number("time", status.elapsedSeconds, decimals: 3)
        object.objects("channels", list)
        object.integer("xruns", status.xruns)
        object.integer("frames_recorded", status.framesRecorded)
        object.integer("frames_dropped", status.framesDropped)
        object.integer("sample_rate", status.sampleRate)
        object.bool("recording", status.isRecording)
        object.string("file", status.fileName)
        if let trigger = status.triggerState { object.string("trigger", trigger) }
        if let reduction = status.noiseReductionDB { object.decibels("noise_reduction_db", reduction, decimals: 1) }
        if let loudness = status.loudness { object.object("loudness", AnalysisFormat.liveJSON(loudness)) }
        if let ballistics = status.ballistics { object.object("ballistics", ballistics.json(includesNow: true)) }
        if let disk = status.disk {
            object.integer("disk_free_bytes", disk.freeBytes)
            object.number("disk_seconds_left", disk.secondsLeft, decimals: 1)
        }
        return object.text
    }
}
