import Foundation
import MediaStore

/// The parent's side: after the writer died, checks the store against the
/// log, then records what it found so that the next round starts from an
/// exact model.
///
/// 1. Read-only, as the crash left it: `verify()` (every checksum, content
///    digest, reference count and counter, staging included), then every
///    key against what the log allows: its last acknowledged state, or,
///    for the operation in flight, its result; an unpinned entry may also
///    be missing if the eviction counter shows the operation in flight
///    evicted, or if it expires and a `removeExpired` was in flight.
///    A present entry must match one of those exactly: flags, length,
///    cached ranges, content digest and every byte.
/// 2. Read-write, as an app reopening it: abandoned staging is released;
///    `verify()` again and every key's presence again.
struct CrashCheck {
    let directory: URL
    let logPath: String

    struct Summary {
        var acknowledged = 0
        var pending = "none"
        var outcome = "-"
        var entries = 0
        var evictions = 0
        var stagingBytes = 0
        var chunks = 0
        var storedBytes = 0
    }

    func run() -> Int32 {
        var problems: [String] = []
        let model: CrashModel
        do {
            model = try CrashModel.replay(path: logPath)
        } catch {
            print("CRASH CHECK ERROR: cannot replay the log: \(error)")
            return 2
        }
        var summary = Summary(acknowledged: model.acknowledgedSinceCheck)
        let pending = model.pending?.op
        // Killed with nothing in flight: before the first operation, or
        // between two (while reading, or preparing the next one).
        summary.pending =
            pending?.name
            ?? (model.acknowledgedSinceCheck > 0 ? "between" : model.startedSinceCheck ? "startup" : "unstarted")
        var resolved: [String: KeyState] = [:]
        var evictionsSeen = model.evictions
        var storedBytesSeen = 0
        var mismatched: Set<String> = []

        // 1. Read-only: the store exactly as the crash left it.
        let dataPath = directory.appendingPathComponent("data.mdb").path
        var readOnly: MediaStore?
        if FileManager.default.fileExists(atPath: dataPath) {
            do {
                readOnly = try MediaStore.openReadOnly(directory: directory)
            } catch {
                if model.opened || !isUninitialised(error) {
                    problems.append("cannot open the store read-only after the crash: \(error)")
                }
            }
        } else if model.opened {
            problems.append("data.mdb is missing")
        }
        if let store = readOnly {
            do {
                let report = try store.verify()
                problems += report.problems.map { "verify (read-only, as the crash left it): \($0)" }
                let statistics = try store.statistics()
                evictionsSeen = statistics.evictions
                storedBytesSeen = statistics.storedBytes
                if statistics.evictions < model.evictions {
                    problems.append("the eviction counter went back from \(model.evictions) to \(statistics.evictions)")
                }
                if pending == nil && statistics.evictions != model.evictions {
                    problems.append(
                        "the eviction counter is \(statistics.evictions), \(model.evictions) acknowledged, nothing in flight"
                    )
                }
                let evictedInFlight = statistics.evictions > model.evictions
                if evictedInFlight && pending?.key == nil && pending != nil { summary.outcome = "evicted" }
                for key in CrashSetup.allKeys {
                    let candidates = try candidates(for: key, model: model, evictedInFlight: evictedInFlight)
                    let observation = try Observation(key: key, store: store)
                    if let match = candidates.first(where: { observation.matches($0.state) }) {
                        resolved[key] = match.state
                        if key == pending?.key { summary.outcome = match.label }
                    } else {
                        resolved[key] = model.state(key)
                        mismatched.insert(key)
                        problems.append(
                            "\(key): found \(observation), but the log allows only "
                                + candidates.map { "\($0.label): \($0.state)" }.joined(separator: " or "))
                    }
                }
                let known = Set(CrashSetup.allKeys)
                for info in try store.entries() where !known.contains(info.key) {
                    problems.append("an entry for a key never written: \(info.key.prefix(100))")
                }
            } catch {
                problems.append("read-only check failed: \(error)")
            }
        } else {
            for key in CrashSetup.allKeys where model.state(key).isPresent {
                problems.append("\(key): \(model.state(key)) acknowledged, but there is no store")
            }
        }
        readOnly = nil

        // 2. Read-write: what an app reopening the store sees.
        var opened = model.opened
        do {
            let store = try MediaStore(directory: directory, configuration: CrashSetup.configuration)
            opened = true
            let report = try store.verify()
            problems += report.problems.map { "verify (after reopening for writing): \($0)" }
            let statistics = try store.statistics()
            if statistics.evictions < evictionsSeen {
                problems.append("reopening moved the eviction counter back to \(statistics.evictions)")
            }
            let evictedByReopen = statistics.evictions > evictionsSeen
            if !evictedByReopen { summary.stagingBytes = max(0, storedBytesSeen - statistics.storedBytes) }
            for key in CrashSetup.allKeys where !mismatched.contains(key) {
                let state = resolved[key] ?? .absent
                let info = try store.info(forKey: key)
                if info == nil && state.isPresent {
                    if evictedByReopen && !state.isPinned {
                        resolved[key] = .absent
                    } else {
                        problems.append("\(key): \(state) vanished when the store was reopened for writing")
                    }
                } else if info != nil && !state.isPresent {
                    problems.append("\(key): an entry appeared when the store was reopened for writing")
                }
            }
            evictionsSeen = statistics.evictions
            summary.entries = statistics.entryCount
            summary.chunks = statistics.chunkCount
            summary.storedBytes = statistics.storedBytes
            summary.evictions = statistics.evictions
        } catch {
            problems.append("cannot reopen the store for writing after the crash: \(error)")
        }

        guard problems.isEmpty else {
            print("CRASH CHECK FAILED (store \(directory.path), log \(logPath))")
            print("in flight: \(pending.map(String.init(describing:)) ?? "nothing")")
            for problem in problems { print("  - \(problem)") }
            return 1
        }
        // Record the resolved states: the next run starts from them. The
        // log so far moves to `<log>.history`; the log is replaced by a
        // snapshot, so that replaying it stays as cheap as one round.
        do {
            try LogFile.truncatePartialLine(path: logPath)
            let finished = FileManager.default.contents(atPath: logPath) ?? Data()
            try LogFile(path: logPath + ".history").append(bytes: finished)
            var snapshot = ["# checked: pending \(summary.pending), outcome \(summary.outcome)"]
            for key in CrashSetup.allKeys {
                if let state = resolved[key], state.isPresent { snapshot.append("S \(key) \(state.encoded)") }
            }
            snapshot.append("C \(evictionsSeen)\(opened ? " opened" : "")")
            try LogFile.replace(path: logPath, lines: snapshot)
        } catch {
            print("CRASH CHECK ERROR: cannot rewrite the log: \(error)")
            return 2
        }
        print(
            "ok acknowledged=\(summary.acknowledged) pending=\(summary.pending) outcome=\(summary.outcome)"
                + " entries=\(summary.entries) chunks=\(summary.chunks) stored-bytes=\(summary.storedBytes)"
                + " evictions=\(summary.evictions)"
                + " staging-bytes=\(summary.stagingBytes)")
        return 0
    }

    /// The states the log allows for `key`, labelled for the summary.
    private func candidates(
        for key: String, model: CrashModel, evictedInFlight: Bool
    ) throws -> [(state: KeyState, label: String)] {
        let base = model.state(key)
        var list: [(state: KeyState, label: String)] = [(base, "old")]
        if let op = model.pending?.op {
            if op.key == key {
                let after = try op.effect(on: base)
                list.append((after, after == base ? "same" : "new"))
            }
            if op == .removeExpired && base.expires { list.append((.absent, "expired")) }
        }
        if evictedInFlight {
            for candidate in list where candidate.state.isPresent && !candidate.state.isPinned {
                list.append((.absent, "evicted"))
            }
        }
        // "same" wins over "old" for the summary when both describe one state.
        if list.count > 1 && list[1].label == "same" { list.removeFirst() }
        return list
    }

    private func isUninitialised(_ error: Error) -> Bool {
        if case StoreError.notAStore = error { return true }
        return false
    }
}

/// What the store holds for one key: its info, cached ranges and their bytes.
struct Observation: CustomStringConvertible {
    let info: EntryInfo?
    let ranges: [Range<Int>]
    let pieces: [Data]

    init(key: String, store: MediaStore) throws {
        info = try store.info(forKey: key)
        guard info != nil else {
            ranges = []
            pieces = []
            return
        }
        ranges = try store.cachedRanges(forKey: key)
        pieces = try ranges.map { try store.read(forKey: key, range: $0, includeExpired: true) }
    }

    func matches(_ state: KeyState) -> Bool {
        switch state {
        case .absent:
            return info == nil
        case .complete(let id, let length, let pinned, let expires):
            guard let info, info.isComplete, info.length == length, info.cachedBytes == length,
                info.isPinned == pinned, (info.expiry != nil) == expires,
                ranges == (length > 0 ? [0..<length] : [])
            else { return false }
            let expected = Content.bytes(id: id, length: length)
            return info.contentDigest == ContentDigest(of: expected) && pieces.reduce(Data(), +) == Data(expected)
        case .partial(let id, let length, let chunks):
            let expectedRanges = Self.ranges(of: chunks, length: length)
            guard let info, !info.isComplete, info.length == length, !info.isPinned, info.expiry == nil,
                info.chunkCount == chunks.count, ranges == expectedRanges,
                info.cachedBytes == expectedRanges.reduce(0, { $0 + $1.count })
            else { return false }
            return zip(ranges, pieces).allSatisfy { range, piece in piece == Data(Content.bytes(id: id, range: range)) }
        }
    }

    /// The merged byte ranges of a set of chunks of a `length`-byte entry.
    static func ranges(of chunks: Set<Int>, length: Int) -> [Range<Int>] {
        var result: [Range<Int>] = []
        for index in chunks.sorted() {
            let range = index * CrashSetup.chunkSize..<min(length, (index + 1) * CrashSetup.chunkSize)
            if let last = result.last, last.upperBound == range.lowerBound {
                result[result.count - 1] = last.lowerBound..<range.upperBound
            } else {
                result.append(range)
            }
        }
        return result
    }

    var description: String {
        guard let info else { return "absent" }
        var parts = [info.isComplete ? "complete" : "partial", "length \(info.length.map(String.init) ?? "unknown")"]
        parts.append("cached \(info.cachedBytes) B in \(ranges)")
        if info.isPinned { parts.append("pinned") }
        if info.expiry != nil { parts.append("expires") }
        if let digest = info.contentDigest { parts.append("digest \(digest)") }
        let bytes = pieces.reduce(Data(), +)
        parts.append("bytes digest \(ContentDigest(of: bytes))")
        return "(" + parts.joined(separator: ", ") + ")"
    }
}
