import Testing

/// Waits (up to 10 s, polling every 10 ms) until `condition` holds, and
/// records an issue naming `what` when it never does.
func eventually(_ what: String, _ condition: () async -> Bool) async {
    for _ in 0..<1000 {
        if await condition() { return }
        try? await Task.sleep(for: .milliseconds(10))
    }
    let holds = await condition()
    #expect(holds, "never: \(what)")
}
