import Foundation
import Testing

@testable import micmon

/// Text compared with a committed file under Snapshots/. `MICMON_UPDATE_SNAPSHOTS=1` rewrites
/// the files instead (review the diff before committing it); under `CI=true` rewriting is refused.
enum Snapshot {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    static func check(_ text: String, file name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = folder.appendingPathComponent(name)
        let environment = ProcessInfo.processInfo.environment
        if environment["MICMON_UPDATE_SNAPSHOTS"] == "1" {
            guard environment["CI"] != "true" else {
                Issue.record(
                    "MICMON_UPDATE_SNAPSHOTS=1 is refused under CI=true: CI compares snapshots, it never writes them",
                    sourceLocation: sourceLocation)
                return
            }
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let stored = try? String(contentsOf: url, encoding: .utf8)
        #expect(
            stored != nil, "no snapshot \(name); make it with MICMON_UPDATE_SNAPSHOTS=1", sourceLocation: sourceLocation
        )
        let advice: Comment =
            "\(name) differs from the output; if the change is meant, rerun with MICMON_UPDATE_SNAPSHOTS=1 and review the diff"
        #expect(stored == text, advice, sourceLocation: sourceLocation)
    }
}

/// Every `--help` page, as micmon prints it, against its snapshot: help text cannot change unseen.
@Suite("Help snapshots")
struct HelpSnapshotTests {
    @Test("micmon --help matches Snapshots/help.txt")
    func mainHelp() throws {
        guard case .help(let text) = try Command.parse(["--help"]) else {
            Issue.record("--help did not parse as help")
            return
        }
        try Snapshot.check(text + "\n", file: "help.txt")
    }

    @Test("micmon COMMAND --help matches Snapshots/COMMAND.txt", arguments: CommandName.allCases)
    func commandHelp(_ name: CommandName) throws {
        guard case .help(let text) = try Command.parse([name.rawValue, "--help"]) else {
            Issue.record("\(name.rawValue) --help did not parse as help")
            return
        }
        try Snapshot.check(text + "\n", file: name.rawValue + ".txt")
    }

    @Test("every snapshot file belongs to a page")
    func noStaleSnapshots() throws {
        let expected = Set(["help.txt"] + CommandName.allCases.map { $0.rawValue + ".txt" })
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: Snapshot.folder.path))
        #expect(present == expected)
    }
}
