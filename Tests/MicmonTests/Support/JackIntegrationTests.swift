import Testing

/// Every test that drives micmon against a real JACK server, one at a time: a test that loads
/// the machine (many recorders at once) must not make another test's clients miss cycles.
@Suite("Against a real JACK server", .serialized)
enum JackIntegrationTests {}
