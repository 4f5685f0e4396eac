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

    // PipeWire's JACK, as the private test configuration shows it (`pw-jack jack_lsp -p`): the
    // virtual source's capture outputs are not flagged physical but its inputs are, and they come
    // before the sink's playback inputs.
    let pipeWire = PortSelection.Catalog(
        inputs: [
            "test microphones:input_FL", "test microphones:input_FR", "test speaker:playback_FL",
            "test speaker:playback_FR",
        ],
        outputs: [
            "test microphones:capture_FL", "test microphones:capture_FR", "test speaker:monitor_FL",
            "test speaker:monitor_FR",
        ],
        physicalInputs: [
            "test microphones:input_FL", "test microphones:input_FR", "test speaker:playback_FL",
            "test speaker:playback_FR",
        ],
        physicalOutputs: [])

    @Test func onPipeWireTheDefaultsAreTheVirtualSourceAndTheSink() throws {
        let sources = PortSelection.defaults(.output, in: pipeWire)
        #expect(sources.rule == .named)
        #expect(sources.ports == ["test microphones:capture_FL", "test microphones:capture_FR"])
        #expect(
            try PortSelection.choose([], direction: .output, defaultCount: 2, in: pipeWire) == [
                "test microphones:capture_FL", "test microphones:capture_FR",
            ])
        // Never the source's inputs, though they are flagged physical and listed first.
        let destinations = PortSelection.defaults(.input, in: pipeWire)
        #expect(destinations.rule == .physical)
        #expect(destinations.ports == ["test speaker:playback_FL", "test speaker:playback_FR"])
    }

    @Test func onJackdTheDefaultsAreThePhysicalPorts() {
        #expect(PortSelection.defaults(.output, in: catalog).rule == .physical)
        #expect(PortSelection.defaults(.output, in: catalog).ports == catalog.physicalOutputs)
        #expect(PortSelection.defaults(.input, in: catalog).ports == catalog.physicalInputs)
    }

    @Test func monitorPortsAreNeverDefaultSources() {
        let monitors = PortSelection.Catalog(
            inputs: ["sink:playback_FL"],
            outputs: ["sink:monitor_FL", "sink Monitor:capture_FL", "card:capture_1"],
            physicalInputs: [], physicalOutputs: ["sink:monitor_FL", "sink Monitor:capture_FL"])
        #expect(PortSelection.isMonitor("sink:monitor_FL"))
        #expect(PortSelection.isMonitor("sink Monitor:capture_FL"))
        #expect(!PortSelection.isMonitor("card:capture_1"))
        let sources = PortSelection.defaults(.output, in: monitors)
        #expect(sources.rule == .named)
        #expect(sources.ports == ["card:capture_1"])
        // Any playback_ input, physical or not, when no physical one is named so.
        #expect(PortSelection.defaults(.input, in: monitors).ports == ["sink:playback_FL"])
    }

    @Test func nothingFitsMeansNoDefaultAndTheCandidatesAreListed() throws {
        let players = PortSelection.Catalog(
            inputs: ["rec:in_1", "source:input_FL"], outputs: ["player:out_1", "player:out_2"],
            physicalInputs: ["source:input_FL"], physicalOutputs: [])
        let sources = PortSelection.defaults(.output, in: players)
        #expect(sources.rule == .none)
        #expect(sources.ports.isEmpty)
        #expect(try PortSelection.choose([], direction: .output, defaultCount: 2, in: players).isEmpty)
        #expect(PortSelection.defaults(.input, in: players).ports.isEmpty)
        let refusal = PortSelection.NoDefault(direction: .output, candidates: sources.candidates)
        #expect(refusal.description.contains("player:out_1, player:out_2"))
        #expect(refusal.description.contains("--allow-unconnected"))
        let playback = PortSelection.NoDefault(direction: .input, candidates: players.inputs)
        #expect(playback.description.contains("-o"))
        #expect(playback.description.contains("rec:in_1, source:input_FL"))
    }
}
