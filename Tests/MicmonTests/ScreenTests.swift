import Testing

@testable import micmon

/// `--label`: the screen's names for the inputs.
@Suite("Command line: --label")
struct LabelOptionTests {
    @Test("--label gives a name per input in order; an empty name keeps the port's")
    func labels() throws {
        guard case .meter(let options) = try Command.parse(["meter", "--label", "primary,reference"]) else {
            Issue.record("meter did not parse as meter")
            return
        }
        #expect(options.labels == ["primary", "reference"])
        guard case .record(let record) = try Command.parse(["record", "take.wav", "--label=,ref"]) else {
            Issue.record("record did not parse as record")
            return
        }
        #expect(record.labels == [nil, "ref"])
        guard case .demo(let demo) = try Command.parse(["demo", "--label", "a,b", "--label", "c"]) else {
            Issue.record("demo did not parse as demo")
            return
        }
        #expect(demo.labels == ["c"])  // the last one counts, as for every option
    }

    @Test("--label with no name at all is a usage error", arguments: ["", ",", ",,"])
    func empty(_ text: String) {
        #expect(throws: UsageError("--label needs names separated by commas, e.g. --label primary,reference")) {
            try Command.parse(["meter", "--label", text])
        }
    }
}
