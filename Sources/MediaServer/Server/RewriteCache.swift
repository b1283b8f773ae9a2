import Foundation
import MediaStore
import MediaSupport

/// The last playlist rewritings of a server (a playlist of thousands of
/// segments is rewritten once, not at every request), bounded by bytes:
/// each entry costs its input and output playlists and the origin URLs it
/// minted (minted again when it is used: see ``MintedOrigins``); the least recently
/// used go first once ``budget`` would be exceeded, and an entry larger
/// than the budget is not kept.
final class RewriteCache: Sendable {
    /// The most bytes kept (inputs and outputs together).
    let budget: Int
    private struct Entry {
        var input: Data
        var output: Data
        var minted: [URL]
        var lastUse: UInt64
        var cost: Int { Self.cost(input, output, minted) }

        static func cost(_ input: Data, _ output: Data, _ minted: [URL]) -> Int {
            minted.reduce(input.count + output.count) { $0 + $1.absoluteString.utf8.count }
        }
    }
    private struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }
    private let state = Locked(State())

    init(budget: Int) { self.budget = max(0, budget) }

    /// The output kept for `path` when it was rewritten from `input`, with the origins it minted.
    func output(for path: String, input: Data) -> (output: Data, minted: [URL])? {
        state.withLock { state in
            guard var entry = state.entries[path], entry.input == input else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[path] = entry
            return (entry.output, entry.minted)
        }
    }

    /// Keeps `output`, the rewriting of `input` for `path` that minted
    /// `minted`, if it fits the budget.
    func keep(_ output: Data, for path: String, input: Data, minted: [URL]) {
        let cost = Entry.cost(input, output, minted)
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: path) { state.bytes -= old.cost }
            guard cost <= budget else { return }
            while state.bytes + cost > budget,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.entries.removeValue(forKey: oldest.key)
                state.bytes -= oldest.value.cost
            }
            state.clock += 1
            state.entries[path] = Entry(input: input, output: output, minted: minted, lastUse: state.clock)
            state.bytes += cost
        }
    }

    /// Bytes kept now.
    var bytes: Int { state.current.bytes }

    /// Entries kept now.
    var count: Int { state.current.entries.count }
}
