// swift-tools-version:6.0
import PackageDescription

// micmon's own modules never use Swift concurrency or regular expressions, so they do not import
// those runtime modules implicitly: the executable then does not load libswift_Concurrency,
// libdispatch, libBlocksRuntime, libswift_StringProcessing and libswift_RegexParser at start.
let withoutImplicitRuntimeImports: [SwiftSetting] = [
    .unsafeFlags([
        "-Xfrontend", "-disable-implicit-concurrency-module-import",
        "-Xfrontend", "-disable-implicit-string-processing-module-import",
    ])
]

// The release micmon carries the Swift runtime inside it (-static-stdlib), so the dynamic loader
// maps and relocates none of the runtime's shared libraries at start (docs/perf-log.md has the
// figures). Debug builds (and so `swift test`, whose test bundle links this module) stay
// dynamic. .ci/run checks it.
let staticSwiftRuntimeInRelease: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]

let package = Package(
    name: "micmon",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "micmon", targets: ["micmon"]),
        .executable(name: "micmon-bench", targets: ["MicmonBench"]),
        .executable(name: "micmon-soak", targets: ["MicmonSoak"]),
    ],
    targets: [
        // C libraries, from Debian packages.
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        .target(name: "CJackShims", dependencies: ["CJack"]),
        .target(name: "CPlatform"),

        // Swift modules, lowest first.
        .target(name: "Platform", dependencies: ["CPlatform"], swiftSettings: withoutImplicitRuntimeImports),
        .target(name: "Realtime", swiftSettings: withoutImplicitRuntimeImports),
        .target(
            name: "DSP", dependencies: ["Realtime", "CSampleRate", "CFFTW"],
            swiftSettings: withoutImplicitRuntimeImports),
        .target(
            name: "Jack", dependencies: ["CJack", "CJackShims", "Platform"],
            swiftSettings: withoutImplicitRuntimeImports),
        .target(name: "SoundFile", dependencies: ["CSndFile"], swiftSettings: withoutImplicitRuntimeImports),
        .target(name: "Loudness", dependencies: ["CEbur128"], swiftSettings: withoutImplicitRuntimeImports),
        .target(name: "JSONText", swiftSettings: withoutImplicitRuntimeImports),
        .target(
            name: "Engine",
            dependencies: ["Jack", "SoundFile", "DSP", "Realtime", "Platform", "Loudness", "JSONText"],
            swiftSettings: withoutImplicitRuntimeImports),
        .target(
            name: "TerminalUI", dependencies: ["DSP", "Platform", "JSONText"],
            swiftSettings: withoutImplicitRuntimeImports),
        .executableTarget(
            name: "micmon", dependencies: ["Engine", "TerminalUI", "Jack", "SoundFile", "DSP", "Platform", "Loudness"],
            swiftSettings: withoutImplicitRuntimeImports, linkerSettings: staticSwiftRuntimeInRelease),

        .executableTarget(
            name: "MicmonBench",
            dependencies: [
                "Realtime", "DSP", "Jack", "CJack", "CJackShims", "SoundFile", "Engine", "Platform", "Loudness",
                "CEbur128",
            ],
            path: "Benchmarks/MicmonBench"),

        .executableTarget(
            name: "MicmonSoak", dependencies: ["Engine", "DSP", "SoundFile", "Jack", "Platform"],
            path: "Benchmarks/MicmonSoak"),

        .testTarget(name: "PlatformTests", dependencies: ["Platform"]),
        .testTarget(name: "RealtimeTests", dependencies: ["Realtime"]),
        .testTarget(name: "DSPTests", dependencies: ["DSP"]),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI", "DSP", "Platform"], exclude: ["Snapshots"]),
        .testTarget(name: "SoundFileTests", dependencies: ["SoundFile"]),
        .testTarget(
            name: "LoudnessTests", dependencies: ["Loudness", "Engine", "DSP", "SoundFile", "Platform", "TerminalUI"]),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "Jack", "SoundFile", "DSP", "Realtime", "Platform"]),
        .testTarget(
            name: "MicmonTests", dependencies: ["micmon", "Engine", "Jack", "SoundFile", "DSP", "Platform"],
            exclude: ["Snapshots"]),
    ],
    swiftLanguageModes: [.v6]
)
