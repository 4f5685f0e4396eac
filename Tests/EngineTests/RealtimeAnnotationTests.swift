import Foundation
import Testing

/// Keeps the realtime path compiler-checked: every function the process callback reaches carries
/// `@_noLocks` and `@_noAllocation` (the compiler then proves it takes no lock and allocates
/// nothing), except the thin glue that calls C. This reads the sources, so a new unannotated
/// kernel function fails here even before it would show up under RealtimeSanitizer.
@Suite("Realtime annotations")
struct RealtimeAnnotationTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")

    /// (file, functions that must be annotated; empty = every function in the file).
    static let kernels: [(String, [String])] = [
        ("Engine/CaptureKernel.swift", []),
        ("Engine/LatencyKernel.swift", []),
        ("Engine/PlaybackKernel.swift", []),
        ("Engine/SessionKernel.swift", []),
        ("Engine/DemoSourceKernel.swift", []),
        ("DSP/Meter.swift", ["process", "processStereo", "scan", "store"]),
        ("DSP/DemoVoiceSource.swift", ["render"]),
        ("DSP/NoiseSuppressorKernel.swift", []),
    ]

    /// Function names declared in `text`, each with the attribute lines just above it.
    static func functions(in text: String) -> [(name: String, attributes: String)] {
        let lines = text.components(separatedBy: "\n")
        var found: [(String, String)] = []
        for (index, line) in lines.enumerated() {
            guard let range = line.range(of: #"\bfunc\s+([A-Za-z_][A-Za-z0-9_]*)"#, options: .regularExpression) else { continue }
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
            let name = line[range].split(separator: " ").last.map(String.init) ?? ""
            let above = lines[max(0, index - 3) ..< index].filter { $0.contains("@") }.joined(separator: " ")
            found.append((name, above + " " + line))
        }
        return found
    }

    @Test("every kernel function is @_noLocks @_noAllocation", arguments: kernels.map(\.0))
    func kernelsAreAnnotated(file: String) throws {
        let required = Self.kernels.first { $0.0 == file }!.1
        let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
        let functions = Self.functions(in: text)
        #expect(!functions.isEmpty)
        for function in functions where required.isEmpty || required.contains(function.name) {
            #expect(function.attributes.contains("@_noLocks"), "\(file): \(function.name) is not @_noLocks")
            #expect(function.attributes.contains("@_noAllocation"), "\(file): \(function.name) is not @_noAllocation")
        }
        for name in required {
            #expect(functions.contains { $0.name == name }, "\(file): \(name) not found")
        }
    }

    /// The glue may call only C (port buffers, sanitizer hooks) and the checked kernel.
    @Test("the process callback glue calls only the port buffers, the hooks and the kernel")
    func glueStaysThin() throws {
        let text = try String(contentsOf: Self.sources.appendingPathComponent("Engine/CaptureCallbacks.swift"), encoding: .utf8)
        let start = try #require(text.range(of: "nonisolated func captureProcess("))
        let end = try #require(text.range(of: "\n}\n", range: start.upperBound ..< text.endIndex))
        let body = String(text[start.upperBound ..< end.lowerBound])
        let calls = Set(body.matches(of: /([A-Za-z_][A-Za-z0-9_.]*)\(/).map { String($0.output.1) })
        let allowed: Set = ["RealtimeHooks.enter", "RealtimeHooks.exit", "JackPortBuffer.samples", "kernel.pointee.process",
                            "plantedAllocation", "UnsafePointer", "Int", "context.assumingMemoryBound",
                            "JackClock.now", "JackClock.systemNow", "JackClock.cycle", "kernel.pointee.recordTiming", "kernel.pointee.monitorPass",
                            "kernel.pointee.link.enterCycle", "kernel.pointee.link.leaveCycle"]
        #expect(calls.subtracting(allowed).isEmpty, "unexpected calls in the glue: \(calls.subtracting(allowed).sorted())")
        #expect(calls.contains("kernel.pointee.process"))
    }

    /// The latency glue: port buffers, clock, hooks, the kernel; nothing else.
    @Test("the latency process callback glue calls only the port buffers, the clock, the hooks and the kernel")
    func latencyGlueStaysThin() throws {
        let text = try String(contentsOf: Self.sources.appendingPathComponent("Engine/LatencyCallbacks.swift"), encoding: .utf8)
        let start = try #require(text.range(of: "nonisolated func latencyProcess("))
        let end = try #require(text.range(of: "\n}\n", range: start.upperBound ..< text.endIndex))
        let body = String(text[start.upperBound ..< end.lowerBound])
        let calls = Set(body.matches(of: /([A-Za-z_][A-Za-z0-9_.]*)\(/).map { String($0.output.1) })
        let allowed: Set = ["RealtimeHooks.enter", "RealtimeHooks.exit", "JackPortBuffer.samples", "kernel.pointee.process",
                            "UnsafePointer", "Int", "context.assumingMemoryBound", "JackClock.now", "JackClock.systemNow", "JackClock.cycle",
                            "kernel.pointee.recordTiming", "kernel.pointee.link.enterCycle", "kernel.pointee.link.leaveCycle"]
        #expect(calls.subtracting(allowed).isEmpty, "unexpected calls in the glue: \(calls.subtracting(allowed).sorted())")
        #expect(calls.contains("kernel.pointee.process"))
    }
}
