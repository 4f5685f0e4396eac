// swift-tools-version:6.0
import PackageDescription


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
        .target(name: "CJackShims", dependencies: ["CJack"]),

        // Swift modules, lowest first.
        .target(name: "Realtime"),
        .target(name: "DSP", dependencies: ["Realtime", "CSampleRate", "CFFTW"]),
        .target(name: "Jack", dependencies: ["CJack", "CJackShims"]),
        .target(name: "SoundFile", dependencies: ["CSndFile"]),
        .target(name: "Engine", dependencies: ["Jack", "SoundFile", "DSP", "Realtime"]),
        .target(name: "TerminalUI", dependencies: ["DSP"]),
        .executableTarget(name: "micmon", dependencies: ["Engine", "TerminalUI", "Jack", "SoundFile", "DSP"]),

        .executableTarget(
            name: "MicmonBench",
            dependencies: ["Realtime", "DSP", "Jack", "CJack", "CJackShims", "SoundFile", "Engine"],
            path: "Benchmarks/MicmonBench"),

        .executableTarget(name: "MicmonSoak", dependencies: ["Engine", "DSP", "SoundFile", "Jack"], path: "Benchmarks/MicmonSoak"),

        .testTarget(name: "RealtimeTests", dependencies: ["Realtime"]),
        .testTarget(name: "DSPTests", dependencies: ["DSP"]),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI", "DSP"]),
        .testTarget(name: "SoundFileTests", dependencies: ["SoundFile"]),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "Jack", "SoundFile", "DSP", "Realtime"]),
        .testTarget(name: "MicmonTests", dependencies: ["micmon", "Engine", "Jack", "SoundFile", "DSP"], exclude: ["Snapshots"]),
    ],
    swiftLanguageModes: [.v6]
)
