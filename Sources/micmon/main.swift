import Glibc
import Platform

// Entry point: parse, run, exit with a documented code. Callbacks handed to C live in other files.
StopSignals.install()
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "play" { exit(PlayCommand.run(Array(arguments.dropFirst())).rawValue) }
if arguments.first == "denoise" { exit(DenoiseCommand.run(Array(arguments.dropFirst())).rawValue) }
let exitCode: ExitCode
do {
    switch try ArgumentParser.parse(arguments) {
    case .help(let text):
        Console.out(text + "\n")
        exitCode = .ok
    case .version:
        Console.out(Usage.version + "\n")
        exitCode = .ok
    case .run(let invocation):
        switch invocation.command {
        case .demo: exitCode = DemoCommand.run(invocation)
        case .latency: exitCode = LatencyCommand.run(invocation)
        default: exitCode = CaptureCommand.run(invocation)
        }
    }
} catch {
    Console.error("micmon: \(error.description)")
    exitCode = .usage
}
exit(exitCode.rawValue)
