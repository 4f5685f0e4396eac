/// Machine-readable output: one JSON object per line, fixed decimals, no locale, finite
/// numbers only (levels below the floor read −160). Pure; any thread.
public enum JSONLines {
    /// A meter snapshot, e.g.
    ///
    ///     {"type":"meter","time":1.250,"channels":[{"name":"in_1","peak_dbfs":-3.2,"rms_dbfs":-12.1,"hold_dbfs":-3.0,"clips":0,"connected":true}],"xruns":0,"frames_recorded":48000,"frames_dropped":0,"sample_rate":48000,"recording":true,"file":"take.wav"}
    ///
    /// `time` has 3 decimals, levels 1; `file` is null when there is none.
    public static func meter(channels: [ChannelDisplay], status: MeterStatus) -> String {
        let list = channels.map { c in
            "{\"name\":" + TextFormat.jsonString(c.name)
                + ",\"peak_dbfs\":" + TextFormat.decibels(c.peakDBFS, decimals: 1)
                + ",\"rms_dbfs\":" + TextFormat.decibels(c.rmsDBFS, decimals: 1)
                + ",\"hold_dbfs\":" + TextFormat.decibels(c.holdDBFS, decimals: 1)
                + ",\"clips\":\(c.clipCount),\"connected\":\(c.isConnected)}"
        }
        return "{\"type\":\"meter\",\"time\":" + TextFormat.fixed(status.elapsedSeconds, decimals: 3)
            + ",\"channels\":[" + list.joined(separator: ",") + "]"
            + ",\"xruns\":\(status.xruns),\"frames_recorded\":\(status.framesRecorded)"
            + ",\"frames_dropped\":\(status.framesDropped),\"sample_rate\":\(status.sampleRate)"
            + ",\"recording\":\(status.isRecording),\"file\":" + (status.fileName.map(TextFormat.jsonString) ?? "null")
            + (status.noiseReductionDB.map { ",\"noise_reduction_db\":" + TextFormat.decibels($0, decimals: 1) } ?? "")
            + "}"
    }
}
