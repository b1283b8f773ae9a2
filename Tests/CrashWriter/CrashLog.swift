import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The state of one key as the log knows it.
enum KeyState: Equatable, CustomStringConvertible {
    case absent
    /// A complete entry holding `Content.bytes(id:length:)`.
    case complete(id: UInt64, length: Int, pinned: Bool, expires: Bool)
    /// A sparse entry of known length holding exactly the chunks listed.
    case partial(id: UInt64, length: Int, chunks: Set<Int>)

    var isPresent: Bool { self != .absent }

    var isPinned: Bool {
        if case .complete(_, _, true, _) = self { return true }
        return false
    }

    var expires: Bool {
        if case .complete(_, _, _, true) = self { return true }
        return false
    }

    /// The `S` line fields after the key.
    var encoded: String {
        switch self {
        case .absent: "-"
        case .complete(let id, let length, let pinned, let expires):
            "C \(id) \(length) \(pinned ? 1 : 0) \(expires ? 1 : 0)"
        case .partial(let id, let length, let chunks):
            "P \(id) \(length) \(chunks.isEmpty ? "-" : chunks.sorted().map(String.init).joined(separator: ","))"
        }
    }

    static func decode(_ fields: ArraySlice<Substring>) -> KeyState? {
        let fields = Array(fields)
        switch fields.first {
        case "-": return fields.count == 1 ? .absent : nil
        case "C":
            guard fields.count == 5, let id = UInt64(fields[1]), let length = Int(fields[2]) else { return nil }
            return .complete(id: id, length: length, pinned: fields[3] == "1", expires: fields[4] == "1")
        case "P":
            guard fields.count == 4, let id = UInt64(fields[1]), let length = Int(fields[2]) else { return nil }
            let chunks = fields[3] == "-" ? [] : fields[3].split(separator: ",").compactMap { Int($0) }
            return .partial(id: id, length: length, chunks: Set(chunks))
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .absent: "absent"
        case .complete(let id, let length, let pinned, let expires):
            "complete(id \(id), \(length) B\(pinned ? ", pinned" : "")\(expires ? ", expires" : ""))"
        case .partial(let id, let length, let chunks):
            "partial(id \(id), \(length) B, chunks \(chunks.sorted()))"
        }
    }

    /// Chunks of a `length`-byte sparse entry.
    static func chunkCount(length: Int) -> Int {
        (length + CrashSetup.chunkSize - 1) / CrashSetup.chunkSize
    }
}

/// One operation of the writer, logged before it runs (`I`) and
/// acknowledged after it returned (`A`).
enum CrashOp: Equatable, CustomStringConvertible {
    case open
    /// A whole put (`streamed == false`) or a streamed write through an `EntryWriter`.
    case put(key: String, id: UInt64, length: Int, pinned: Bool, expires: Bool, streamed: Bool)
    /// A streamed write that is cancelled: no effect.
    case cancel(key: String)
    case delete(key: String)
    /// `prepareEntry` of a sparse entry (the key is absent before).
    case prepare(key: String, id: UInt64, length: Int)
    /// `write(_:at:forKey:)` of chunks `first..<first+count` (clipped to the entry).
    case fill(key: String, id: UInt64, first: Int, count: Int)
    case removeExpired
    case evict(bytes: Int)

    var key: String? {
        switch self {
        case .put(let key, _, _, _, _, _), .cancel(let key), .delete(let key), .prepare(let key, _, _),
            .fill(let key, _, _, _):
            key
        case .open, .removeExpired, .evict: nil
        }
    }

    var name: String {
        switch self {
        case .open: "OPEN"
        case .put(_, _, _, _, _, let streamed): streamed ? "STREAM" : "PUT"
        case .cancel: "CANCEL"
        case .delete: "DEL"
        case .prepare: "PREP"
        case .fill: "FILL"
        case .removeExpired: "REXP"
        case .evict: "EVICT"
        }
    }

    var encoded: String {
        switch self {
        case .open, .removeExpired: name
        case .put(let key, let id, let length, let pinned, let expires, _):
            "\(name) \(key) \(id) \(length) \(pinned ? 1 : 0) \(expires ? 1 : 0)"
        case .cancel(let key), .delete(let key): "\(name) \(key)"
        case .prepare(let key, let id, let length): "\(name) \(key) \(id) \(length)"
        case .fill(let key, let id, let first, let count): "\(name) \(key) \(id) \(first) \(count)"
        case .evict(let bytes): "\(name) \(bytes)"
        }
    }

    var description: String { encoded.count > 160 ? String(encoded.prefix(157)) + "..." : encoded }

    static func decode(_ fields: ArraySlice<Substring>) -> CrashOp? {
        let f = Array(fields)
        guard let name = f.first else { return nil }
        func int(_ index: Int) -> Int? { index < f.count ? Int(f[index]) : nil }
        func uint(_ index: Int) -> UInt64? { index < f.count ? UInt64(f[index]) : nil }
        switch (name, f.count) {
        case ("OPEN", 1): return .open
        case ("REXP", 1): return .removeExpired
        case ("EVICT", 2): return int(1).map { .evict(bytes: $0) }
        case ("PUT", 6), ("STREAM", 6):
            guard let id = uint(2), let length = int(3) else { return nil }
            return .put(
                key: String(f[1]), id: id, length: length, pinned: f[4] == "1", expires: f[5] == "1",
                streamed: name == "STREAM")
        case ("CANCEL", 2): return .cancel(key: String(f[1]))
        case ("DEL", 2): return .delete(key: String(f[1]))
        case ("PREP", 4):
            guard let id = uint(2), let length = int(3) else { return nil }
            return .prepare(key: String(f[1]), id: id, length: length)
        case ("FILL", 5):
            guard let id = uint(2), let first = int(3), let count = int(4) else { return nil }
            return .fill(key: String(f[1]), id: id, first: first, count: count)
        default: return nil
        }
    }

    /// The state of the op's key once the op has committed, from `state` before.
    func effect(on state: KeyState) throws(LogError) -> KeyState {
        switch self {
        case .put(_, let id, let length, let pinned, let expires, _):
            return .complete(id: id, length: length, pinned: pinned, expires: expires)
        case .delete:
            return .absent
        case .prepare(_, let id, let length):
            guard state == .absent else { throw LogError("PREP of a key that is not absent (\(state))") }
            return length == 0
                ? .complete(id: id, length: 0, pinned: false, expires: false)
                : .partial(id: id, length: length, chunks: [])
        case .fill(_, let id, let first, let count):
            guard case .partial(id, let length, var chunks) = state else {
                throw LogError("FILL of id \(id) into \(state)")
            }
            let total = KeyState.chunkCount(length: length)
            for index in first..<min(first + count, total) { chunks.insert(index) }
            return chunks.count == total
                ? .complete(id: id, length: length, pinned: false, expires: false)
                : .partial(id: id, length: length, chunks: chunks)
        case .open, .cancel, .removeExpired, .evict:
            return state
        }
    }
}

struct LogError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The log replayed: what is known committed, and the operation that was
/// in flight when the writer died (if any).
///
/// Lines: `# comment`, `I seq OP args` (intent), `A seq evictions gone`
/// (acknowledged; `gone` lists the keys found evicted or expired away
/// after the op, comma-separated, or `-`), `S key state` (a state
/// resolved by the checker) and `C evictions` (the checker's close).
struct CrashModel {
    var states: [String: KeyState] = [:]
    /// The store's eviction counter as of the last acknowledgement or check.
    var evictions = 0
    var pending: (seq: Int, op: CrashOp)?
    /// Operations acknowledged since the last check.
    var acknowledgedSinceCheck = 0
    /// Whether an `OPEN` was ever acknowledged (the store was initialised).
    var opened = false
    /// Whether a writer logged its start since the last check.
    var startedSinceCheck = false

    func state(_ key: String) -> KeyState { states[key] ?? .absent }

    mutating func set(_ key: String, _ state: KeyState) {
        states[key] = state == .absent ? nil : state
    }

    /// Replays the log at `path` (a missing file is an empty log). An
    /// unterminated last line is ignored.
    static func replay(path: String) throws -> CrashModel {
        var model = CrashModel()
        guard let data = FileManager.default.contents(atPath: path) else { return model }
        var text = String(decoding: data, as: UTF8.self)
        if let lastNewline = text.lastIndex(of: "\n") {
            text = String(text[...lastNewline])
        } else {
            text = ""
        }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            do throws(LogError) {
                try model.apply(line)
            } catch {
                throw LogError("\(path):\(number + 1): \(error.description): \(line.prefix(200))")
            }
        }
        return model
    }

    mutating func apply(_ line: Substring) throws(LogError) {
        let fields = line.split(separator: " ")
        guard let kind = fields.first else { return }
        switch kind {
        case "#":
            if fields.count > 1 && fields[1] == "run" { startedSinceCheck = true }
        case "I":
            guard fields.count >= 3, let seq = Int(fields[1]), let op = CrashOp.decode(fields[2...]) else {
                throw LogError("bad intent")
            }
            if let pending {
                throw LogError("intent \(seq) while \(pending.op) (\(pending.seq)) was never acknowledged nor checked")
            }
            pending = (seq, op)
        case "A":
            guard fields.count == 4, let seq = Int(fields[1]), let evicted = Int(fields[2]) else {
                throw LogError("bad acknowledgement")
            }
            guard let pending, pending.seq == seq else {
                throw LogError("acknowledgement of \(seq) without its intent")
            }
            if let key = pending.op.key { set(key, try pending.op.effect(on: state(key))) }
            if fields[3] != "-" {
                for key in fields[3].split(separator: ",") { set(String(key), .absent) }
            }
            if pending.op == .open { opened = true }
            evictions = evicted
            self.pending = nil
            acknowledgedSinceCheck += 1
        case "S":
            guard fields.count >= 3, let state = KeyState.decode(fields[2...]) else { throw LogError("bad state") }
            set(String(fields[1]), state)
        case "C":
            guard fields.count >= 2, let evicted = Int(fields[1]) else { throw LogError("bad check line") }
            evictions = evicted
            pending = nil
            acknowledgedSinceCheck = 0
            startedSinceCheck = false
            if fields.count >= 3 && fields[2] == "opened" { opened = true }
        default:
            throw LogError("unknown line")
        }
    }
}

/// An append-only log file. Each line goes out in one `write(2)`, so a
/// SIGKILL never leaves half a line; acknowledgements are also fsynced.
final class LogFile {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw LogError("cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(descriptor)
    }

    func append(_ line: String, sync: Bool) throws {
        try append(bytes: Data((line + "\n").utf8))
        if sync && fsync(descriptor) != 0 { throw LogError("log fsync failed: \(String(cString: strerror(errno)))") }
    }

    func append(bytes: Data) throws {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw LogError("log write failed: \(String(cString: strerror(errno)))") }
    }

    /// Replaces the file at `path` with `lines`, atomically (write, fsync, rename).
    static func replace(path: String, lines: [String]) throws {
        let temporary = path + ".new"
        unlink(temporary)
        do {
            let file = try LogFile(path: temporary)
            try file.append(bytes: Data(lines.map { $0 + "\n" }.joined().utf8))
            guard fsync(file.descriptor) == 0 else { throw LogError("fsync of \(temporary) failed") }
        }
        guard rename(temporary, path) == 0 else {
            throw LogError("cannot rename \(temporary): \(String(cString: strerror(errno)))")
        }
    }

    /// Cuts an unterminated last line off the log at `path`.
    static func truncatePartialLine(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path), let last = data.last, last != UInt8(ascii: "\n")
        else { return }
        let keep = (data.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? 0
        guard truncate(path, off_t(keep)) == 0 else { throw LogError("cannot truncate \(path)") }
    }
}
