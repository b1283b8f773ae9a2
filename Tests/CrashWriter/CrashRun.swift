import Foundation
import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The child: seeded random operations through the public API, each
/// logged before it starts and acknowledged once it returned, until
/// killed (or until `maxOperations`).
///
/// It keeps an exact model of the store (replayed from the log, which
/// the checker resolved after the last crash). After an operation that
/// evicted or expired something, it asks the store which keys are gone
/// and logs them with the acknowledgement, so that the checker knows
/// exactly what must still be there. Reads are checked against the model
/// as it goes; any disagreement ends the process with status 3.
final class CrashRun {
    private let directory: URL
    private let log: LogFile
    private var model: CrashModel
    private var random: SplitMix64
    private var store: MediaStore!
    private var seq = 0
    private let keys = CrashSetup.allKeys

    init(directory: String, seed: UInt64, logPath: String) throws {
        self.directory = URL(fileURLWithPath: directory)
        model = try CrashModel.replay(path: logPath)
        if let pending = model.pending {
            throw LogError("the log ends with \(pending.op) unacknowledged: run `crash-writer check` first")
        }
        log = try LogFile(path: logPath)
        random = SplitMix64(seed: seed)
        try log.append("# run seed=\(seed) pid=\(getpid())", sync: false)
    }

    func run(maxOperations: Int?) throws {
        try perform(.open) {
            store = try MediaStore(directory: directory, configuration: CrashSetup.configuration)
            return nil
        }
        var done = 0
        while maxOperations.map({ done < $0 }) ?? true {
            try step()
            done += 1
        }
    }

    // MARK: Operations

    private func step() throws {
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<30: try put(streamed: false)
        case 30..<47: try put(streamed: true)
        case 47..<52: try cancelledStream()
        case 52..<70: try sparse()
        case 70..<76: try remove()
        case 76..<79:
            try perform(.removeExpired) {
                _ = try store.removeExpired(); return nil
            }
        case 79..<82:
            let bytes = Int.random(in: 1 << 20...6 << 20, using: &random)
            try perform(.evict(bytes: bytes)) {
                _ = try store.evict(toBytes: bytes); return nil
            }
        default: try get()
        }
    }

    private func randomLength() -> Int {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<4: return 0
        case 4..<20: return Int.random(in: 1...CrashSetup.configuration.inlineLimit + 16, using: &random)
        case 20..<35:  // around a chunk boundary
            let chunks = Int.random(in: 1...(CrashSetup.maxLength / CrashSetup.chunkSize - 1), using: &random)
            return chunks * CrashSetup.chunkSize + Int.random(in: -2...2, using: &random)
        default: return Int.random(in: 1...CrashSetup.maxLength, using: &random)
        }
    }

    /// A fresh content id, or one of a small shared pool (dedup across keys).
    private func contentID() -> UInt64 {
        random.chance(0.25) ? UInt64.random(in: 1...6, using: &random) : random.next() | 1 << 32
    }

    private func put(streamed: Bool) throws {
        let pinned = random.chance(0.12)
        let key =
            pinned
            ? CrashSetup.pinnedKeys.randomElement(using: &random)!
            : CrashSetup.regularKeys.randomElement(using: &random)!
        let id = contentID()
        let length = randomLength()
        let expires = !pinned && random.chance(0.15)
        let options = WriteOptions(
            expiry: expires ? .after(Double.random(in: 0.02...1.0, using: &random)) : .never, pinned: pinned)
        let value = Content.bytes(id: id, length: length)
        try perform(.put(key: key, id: id, length: length, pinned: pinned, expires: expires, streamed: streamed)) {
            guard streamed else {
                try store.put(value, forKey: key, options: options)
                return nil
            }
            let writer = try store.makeWriter(
                forKey: key, options: options, expectedLength: random.chance(0.5) ? length : nil)
            var offset = 0
            while offset < length {
                let piece = Int.random(in: 1...48 << 10, using: &random)
                let end = min(length, offset + piece)
                try writer.append(value[offset..<end])
                offset = end
            }
            try writer.finish()
            return nil
        }
    }

    private func cancelledStream() throws {
        let key = CrashSetup.allKeys.randomElement(using: &random)!
        let id = contentID()
        let value = Content.bytes(id: id, length: randomLength())
        let stop = Int.random(in: 0...value.count, using: &random)
        let dropInstead = random.chance(0.3)
        try perform(.cancel(key: key)) {
            let writer = try store.makeWriter(forKey: key)
            var offset = 0
            while offset < stop {
                let end = min(stop, offset + Int.random(in: 1...64 << 10, using: &random))
                try writer.append(value[offset..<end])
                offset = end
            }
            if !dropInstead { writer.cancel() }  // else deinit cancels
            return nil
        }
    }

    private func sparse() throws {
        // Mostly carry on filling an entry begun earlier.
        let partial = CrashSetup.regularKeys.filter {
            if case .partial = model.state($0) { return true } else { return false }
        }
        let key =
            random.chance(0.7) && !partial.isEmpty
            ? partial.randomElement(using: &random)! : CrashSetup.regularKeys.randomElement(using: &random)!
        switch model.state(key) {
        case .partial(let id, let length, let chunks):
            let total = KeyState.chunkCount(length: length)
            let missing = (0..<total).filter { !chunks.contains($0) }
            // Mostly start at a hole; sometimes overlap present chunks.
            let first =
                random.chance(0.8) ? missing.randomElement(using: &random)! : Int.random(in: 0..<total, using: &random)
            let count = Int.random(in: 1...4, using: &random)
            let range = first * CrashSetup.chunkSize..<min(length, (first + count) * CrashSetup.chunkSize)
            let bytes = Content.bytes(id: id, range: range)
            try perform(.fill(key: key, id: id, first: first, count: count)) {
                guard let version = try store.info(forKey: key)?.version else {
                    return "fill(\(key)): no entry, the model says it is partial"
                }
                try store.write(bytes, at: range.lowerBound, forKey: key, version: version)
                return nil
            }
        case .complete, .absent:
            if model.state(key).isPresent {
                try perform(.delete(key: key)) { try checkedRemove(key) }
            }
            let length = random.chance(0.03) ? 0 : Int.random(in: 1...CrashSetup.maxLength, using: &random)
            try perform(.prepare(key: key, id: contentID(), length: length)) {
                try store.prepareEntry(forKey: key, length: length, options: WriteOptions(expiry: .never))
                return nil
            }
        }
    }

    private func remove() throws {
        let key = CrashSetup.regularKeys.randomElement(using: &random)!
        try perform(.delete(key: key)) { try checkedRemove(key) }
    }

    private func checkedRemove(_ key: String) throws -> String? {
        let existed = try store.remove(forKey: key)
        if existed != model.state(key).isPresent {
            return "remove(\(key)) returned \(existed), the model says \(model.state(key))"
        }
        return nil
    }

    /// Reads a key and checks what comes back against the model.
    private func get() throws {
        let key = keys.randomElement(using: &random)!
        let state = model.state(key)
        let data = try store.data(forKey: key)
        switch state {
        case .absent:
            if data != nil { fail("\(key): data(forKey:) returned \(data!.count) bytes for an absent key") }
            if try store.info(forKey: key) != nil { fail("\(key): info(forKey:) found an absent key") }
        case .complete(let id, let length, _, let expires):
            let expected = Content.bytes(id: id, length: length)
            if let data {
                if data != Data(expected) { fail("\(key): data(forKey:) returned bytes other than \(state)") }
            } else if !expires {
                fail("\(key): data(forKey:) missed \(state)")
            }
            if length > 0 && random.chance(0.5) {
                let start = Int.random(in: 0..<length, using: &random)
                let end = Int.random(in: start + 1...length, using: &random)
                let part = try store.read(forKey: key, range: start..<end, includeExpired: true)
                if part != Data(expected[start..<end]) {
                    fail("\(key): read(\(start)..<\(end)) returned wrong bytes of \(state)")
                }
            }
        case .partial(let id, let length, let chunks):
            if data != nil { fail("\(key): data(forKey:) returned a partial entry") }
            if let index = chunks.randomElement(using: &random) {
                let range = index * CrashSetup.chunkSize..<min(length, (index + 1) * CrashSetup.chunkSize)
                let part = try store.read(forKey: key, range: range)
                if part != Data(Content.bytes(id: id, range: range)) {
                    fail("\(key): chunk \(index) of \(state) read back wrong")
                }
            }
        }
    }

    // MARK: Logging

    /// Logs the intent, runs `body` (which returns a problem, or nil),
    /// updates the model, finds what was evicted or expired away, and
    /// acknowledges.
    private func perform(_ op: CrashOp, _ body: () throws -> String?) throws {
        seq += 1
        try log.append("I \(seq) \(op.encoded)", sync: true)
        if let problem = try body() { fail(problem) }
        if let key = op.key { model.set(key, try op.effect(on: model.state(key))) }
        let evictions = try store.statistics().evictions
        var gone: [String] = []
        if evictions != model.evictions || op == .removeExpired || op == .open {
            gone = try reconcile(op: op, evicted: evictions != model.evictions)
        }
        model.evictions = evictions
        try log.append("A \(seq) \(evictions) \(gone.isEmpty ? "-" : gone.joined(separator: ","))", sync: true)
    }

    /// Compares every key's presence with the model; returns the keys
    /// that went away (and updates the model).
    private func reconcile(op: CrashOp, evicted: Bool) throws -> [String] {
        var gone: [String] = []
        for key in keys {
            let state = model.state(key)
            let present = try store.info(forKey: key) != nil
            if present == state.isPresent { continue }
            if present { fail("\(key): present after \(op), the model says absent") }
            if state.isPinned { fail("\(key): pinned \(state) vanished after \(op)") }
            if !evicted && !(op == .removeExpired && state.expires) {
                fail("\(key): \(state) vanished after \(op) without an eviction")
            }
            gone.append(key)
            model.set(key, .absent)
        }
        return gone
    }

    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("crash-writer: MODEL MISMATCH: \(message)\n".utf8))
        exit(3)
    }
}
