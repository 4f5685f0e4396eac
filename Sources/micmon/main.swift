import Platform

// Entry point: parse, run, exit with a documented code. Callbacks handed to C live in other files.
// Descriptors 0-2 first, before libjack or libsndfile opens anything (a closed stdout would
// otherwise be the next file opened, and the meters would be written into it).
StandardStream.ensureOpen()
StopSignals.install()
let exitCode: ExitCode
do {
    switch try Command.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help(let text):
        Console.out(text + "\n")
        exitCode = .ok
    case .version:
        Console.out(CommandTable.version + "\n")
        exitCode = .ok
    case .meter(let options), .record(let options), .monitor(let options):
        exitCode = CaptureCommand.run(options)
    case .demo(let options):
        exitCode = DemoCommand.run(options)
    case .latency(let options):
        exitCode = LatencyCommand.run(options)
    case .play(let options):
        exitCode = PlayCommand.run(options)
    case .denoise(let options):
        exitCode = DenoiseCommand.run(options)
    case .report(let options):
        exitCode = ReportCommand.run(options)
    case .completions(let shell):
        Console.out(CompletionScript.script(for: shell))
        exitCode = .ok
    case .manual:
        Console.out(ManualPage.page)
        exitCode = .ok
    case .ports(let options):
        exitCode = PortsCommand.run(options)
    case .control(let options):
        exitCode = ControlCommand.run(options)
    }
} catch {
    Console.error("micmon: \(error.description)")
    exitCode = .usage
}
ProcessExit.exit(exitCode.rawValue)
