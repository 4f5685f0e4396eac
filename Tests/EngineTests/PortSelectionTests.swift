import Engine
import Testing

@Suite("Port selection")
struct PortSelectionTests {
    let ports = ["system:capture_1", "system:capture_2", "system:capture_3", "player:out_1", "player:out_2"]

    @Test func exactNamesKeepTheirOrder() throws {
        #expect(
            try PortSelection.resolve(["player:out_2", "system:capture_1"], outputPorts: ports) == [
                "player:out_2", "system:capture_1",
            ])
    }

    @Test func patternsExpandInServerOrder() throws {
        #expect(
            try PortSelection.resolve(["system:capture_*"], outputPorts: ports) == [
                "system:capture_1", "system:capture_2", "system:capture_3",
            ])
        #expect(
            try PortSelection.resolve(["player:out_?", "system:capture_[12]"], outputPorts: ports)
                == ["player:out_1", "player:out_2", "system:capture_1", "system:capture_2"])
    }

    @Test func duplicatesAreKeptOnce() throws {
        #expect(
            try PortSelection.resolve(["player:out_1", "player:*"], outputPorts: ports) == [
                "player:out_1", "player:out_2",
            ])
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

    // The one resolver, as every session uses it: a catalog of the server's ports.
    let catalog = PortSelection.Catalog(
        inputs: ["system:playback_1", "system:playback_2", "rec:in_1"],
        outputs: ["system:capture_1", "system:capture_2", "system:capture_3", "player:out_1"],
        physicalInputs: ["system:playback_1", "system:playback_2"],
        physicalOutputs: ["system:capture_1", "system:capture_2", "system:capture_3"])

    @Test func noRequestsMeansTheFirstPhysicalPorts() throws {
        #expect(
            try PortSelection.choose([], direction: .output, defaultCount: 2, in: catalog)
                == ["system:capture_1", "system:capture_2"])
        #expect(
            try PortSelection.choose([], direction: .input, defaultCount: 2, in: catalog)
                == ["system:playback_1", "system:playback_2"])
        // Fewer physical ports than asked for: what there is (the session warns).
        #expect(try PortSelection.choose([], direction: .input, defaultCount: 4, in: catalog).count == 2)
    }

    @Test func requestsResolveAmongThatDirectionOnly() throws {
        #expect(
            try PortSelection.choose(
                ["player:*", "system:capture_3"], direction: .output, defaultCount: 2, in: catalog)
                == ["player:out_1", "system:capture_3"])
        do {
            _ = try PortSelection.choose(["rec:in_1"], direction: .output, defaultCount: 2, in: catalog)
            Issue.record("an input port was taken as a source")
        } catch {
            #expect(error.kind == "output")
            #expect(error.available == catalog.outputs)
        }
    }

    @Test func firstTakesTheFirstMatchAndNamesTheWrongDirection() throws {
        #expect(try PortSelection.first("system:playback_*", wanted: .input, in: catalog) == "system:playback_1")
        #expect(throws: PortSelection.Mismatch.self) { try PortSelection.first("nosuch", wanted: .input, in: catalog) }
        do {
            _ = try PortSelection.first("system:capture_?", wanted: .input, in: catalog)
            Issue.record("an output port was taken as a destination")
        } catch {
            guard case .wrongDirection(let found) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(found == "system:capture_1")
        }
    }
}
