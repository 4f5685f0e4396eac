import DSP
import Engine
import Platform
import SoundFile
import TerminalUI

/// `micmon report FILE...`: each file through the take analysis, printed as text or JSON, and with
/// `--svg` drawn. Everything is read and computed before anything is printed or written, so bad
/// input leaves one line on stderr and nothing else. Main thread.
enum ReportCommand {
    static func run(_ options: ReportOptions) -> ExitCode {
        var results: [(path: String, analysis: TakeAnalysisResult)] = []
        for path in options.paths {
            do {
                let analysis = try FileAnalysis.analyze(
                    path: path, mode: options.loudnessMode, keepsEnvelope: options.svgPath != nil)
                results.append((path, analysis))
            } catch {
                Console.error("micmon: \(error.description)")
                return .usage
            }
        }
        if let svgPath = options.svgPath, let first = results.first {
            let markers = sidecarMarkers(for: first.path, sampleRate: first.analysis.sampleRate)
            if let failure = writePicture(first.analysis, of: first.path, markers: markers, to: svgPath) {
                Console.error("micmon: \(failure)")
                return .fileError
            }
        }
        for (path, analysis) in results {
            if options.json {
                Console.out(AnalysisFormat.reportJSON(analysis, path: path) + "\n")
            } else {
                Console.out(AnalysisFormat.reportText(analysis, path: path) + "\n")
            }
        }
        return .ok
    }

    /// The path of a take's sidecar of markers: FILE.json.
    static func sidecarPath(for path: String) -> String { path + ".json" }

    /// The markers of FILE.json, or none when there is no such file (or it is not a sidecar).
    static func sidecarMarkers(for path: String, sampleRate: Int) -> [TakeMarker] {
        guard let bytes = FileSystem.readWhole(sidecarPath(for: path)) else { return [] }
        return TakeMarker.parseSidecar(bytes, sampleRate: sampleRate) ?? []
    }

    /// Draws `analysis` into `svgPath`, whole or not at all; the reason when it could not.
    static func writePicture(
        _ analysis: TakeAnalysisResult, of path: String, markers: [TakeMarker], to svgPath: String
    ) -> String? {
        let svg = TakeGraph.svg(analysis, title: path, markers: markers)
        do {
            try FileSystem.writeWhole(svg, to: svgPath)
        } catch {
            return "\(svgPath): cannot write the picture: \(error.description)"
        }
        return nil
    }
}
