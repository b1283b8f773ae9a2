import Foundation
import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The group-commit crash child: several threads put at once, so that
/// their writes share commits, and each logs a key once its put
/// returned. Killed at a random point, every logged key must be in the
/// reopened store with exactly its bytes (``GroupCheck``).
///
/// A key names its content: `g<seed>-<thread>-<n>-<length>`, the bytes
/// ``Content/bytes(id:length:)`` of the key's ``GroupRun/contentID(_:)``.
/// One put in five streams through an ``EntryWriter``; one in ten is
/// streamed and published with a hold by its thread in the same commit
/// (`EntryWriter.finish(with:)`), its key `g<seed>-<thread>-<n>h-<length>`:
/// such an entry is never seen without its hold.
enum GroupRun {
    static let threads = 6

    static func contentID(_ key: String) -> UInt64 {
        key.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// The holder of a key published with its hold (its thread's), or
    /// `nil` for a key put without one.
    static func holder(of key: String) -> String? {
        let fields = key.split(separator: "-")
        guard fields.count == 4, fields[2].hasSuffix("h") else { return nil }
        return "crash/\(fields[1])"
    }

    /// The length a key names (its last field).
    static func length(of key: String) -> Int? {
        key.split(separator: "-").last.flatMap { Int($0) }
    }

    /// Runs until killed (or `maxPuts` per thread); returns an exit status.
    static func run(directory: String, seed: UInt64, logPath: String, maxPuts: Int?) -> Int32 {
        let store: MediaStore
        let log: FileHandle
        do {
            store = try MediaStore(directory: URL(fileURLWithPath: directory))
            if !FileManager.default.fileExists(atPath: logPath) {
                _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            }
            log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            try log.seekToEnd()
        } catch {
            FileHandle.standardError.write(Data("crash-writer group: \(error)\n".utf8))
            return 2
        }
        // Guards the log and `failures`.
        let logLock = NSLock()
        nonisolated(unsafe) var failures = 0
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                defer { group.leave() }
                var random = SplitMix64(seed: seed ^ UInt64(thread) &* 0x9E37_79B9_7F4A_7C15)
                var n = 0
                while maxPuts.map({ n < $0 }) ?? true {
                    let length = Int.random(in: 0...40_000, using: &random)
                    let held = random.chance(0.1)
                    let key = "g\(seed)-\(thread)-\(n)\(held ? "h" : "")-\(length)"
                    let bytes = Content.bytes(id: contentID(key), length: length)
                    do {
                        if held {
                            let writer = try store.makeWriter(forKey: key)
                            try writer.append(bytes)
                            try writer.finish { batch, info in
                                try batch.hold(key, by: "crash/\(thread)", version: info.version)
                            }
                        } else if random.chance(0.2) {
                            let writer = try store.makeWriter(forKey: key)
                            try writer.append(bytes)
                            try writer.finish()
                        } else {
                            try store.put(bytes, forKey: key)
                        }
                    } catch {
                        FileHandle.standardError.write(Data("crash-writer group: put \(key): \(error)\n".utf8))
                        logLock.withLock { failures += 1 }
                        return
                    }
                    // One write(2) per line: the kernel keeps it through a SIGKILL.
                    logLock.withLock { log.write(Data("A \(key)\n".utf8)) }
                    n += 1
                }
            }.start()
        }
        group.wait()
        return logLock.withLock { failures } == 0 ? 0 : 2
    }
}

/// The group-commit check: the store as the kill left it verifies clean,
/// and every key the log acknowledged reads back exactly.
enum GroupCheck {
    static func run(directory: String, logPath: String) -> Int32 {
        do {
            let text = try String(contentsOfFile: logPath, encoding: .utf8)
            // A line torn by the kill has no newline yet: it is not an acknowledgement.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let keys = lines.compactMap { $0.hasPrefix("A ") ? String($0.dropFirst(2)) : nil }
            let store = try MediaStore.openReadOnly(directory: URL(fileURLWithPath: directory))
            defer { store.close() }
            var problems = try store.verify().problems
            for key in keys {
                guard let length = GroupRun.length(of: key) else {
                    problems.append("\(key): not a key the writer makes")
                    continue
                }
                guard let data = try store.data(forKey: key) else {
                    problems.append("\(key): acknowledged, missing from the reopened store")
                    continue
                }
                if data != Data(Content.bytes(id: GroupRun.contentID(key), length: length)) {
                    problems.append("\(key): acknowledged, read back \(data.count) bytes that differ")
                }
            }
            // Nothing half-written: every entry in the store (acknowledged
            // or not) reads back exactly, and one published with its hold
            // is held.
            let entries = try store.entries()
            for entry in entries {
                guard let length = GroupRun.length(of: entry.key), entry.length == length,
                    let data = try store.data(forKey: entry.key),
                    data == Data(Content.bytes(id: GroupRun.contentID(entry.key), length: length))
                else {
                    problems.append("\(entry.key): in the store, not exactly the bytes its key names")
                    continue
                }
                if let holder = GroupRun.holder(of: entry.key), try store.holders(of: entry.key) != [holder] {
                    problems.append(
                        "\(entry.key): published with its hold, held by \(try store.holders(of: entry.key))")
                }
            }
            let held = keys.filter { GroupRun.holder(of: $0) != nil }.count
            print(
                "group check: \(keys.count) acknowledged puts (\(held) published with a hold), \(entries.count) entries, "
                    + "\(problems.count) problems")
            for problem in problems.prefix(20) { print("GROUP CHECK PROBLEM: \(problem)") }
            return problems.isEmpty ? 0 : 1
        } catch {
            print("GROUP CHECK ERROR: \(error)")
            return 2
        }
    }
}
