import Engine
import Testing

@Suite("Port selection")
struct PortSelectionTests {
    let ports = ["system:capture_1", "system:capture_2", "system:capture_3", "player:out_1", "player:out_2"]

    @Test func exactNamesKeepTheirOrder() throws {
        #expect(try PortSelection.resolve(["player:out_2", "system:capture_1"], outputPorts: ports) == ["player:out_2", "system:capture_1"])
    }

    @Test func patternsExpandInServerOrder() throws {
        #expect(try PortSelection.resolve(["system:capture_*"], outputPorts: ports) == ["system:capture_1", "system:capture_2", "system:capture_3"])
        #expect(try PortSelection.resolve(["player:out_?", "system:capture_[12]"], outputPorts: ports)
            == ["player:out_1", "player:out_2", "system:capture_1", "system:capture_2"])
    }

    @Test func duplicatesAreKeptOnce() throws {
        #expect(try PortSelection.resolve(["player:out_1", "player:*"], outputPorts: ports) == ["player:out_1", "player:out_2"])
    }

    @Test func unknownPortListsWhatThereIs() {
        #expect(throws: PortSelection.NoMatch.self) { try PortSelection.resolve(["player:out_3"], outputPorts: ports) }
        do {
            _ = try PortSelection.resolve(["nosuch:*"], outputPorts: ports)
            Issue.record("expected NoMatch")
        } catch {
            #expect(error.request == "nosuch:*")
            #expect(error.description.contains("system:capture_1, system:capture_2"))
        }
    }
}
