import Foundation
import MediaStore

/// Damages copies of a store's `data.mdb` (flipped bytes anywhere, flipped
/// bytes in LMDB's own meta/branch/leaf pages, truncation) and runs
/// `cachetool verify` on each, then classifies what happened.
///
/// When verify calls a damaged copy clean, every key is read back with
/// `cachetool cat`: bytes that differ from what was stored would be
/// silent corruption, the one outcome that must never happen. Also never
/// allowed: cachetool itself dying (verify walks in a child process).
///
/// Every case that is neither detected nor harmless is listed (`miss:`)
/// with its damage and the failing reads; with `CORRUPTION_KEEP=DIR` its
/// damaged `data.mdb` (and the pristine one) is kept there.
///
/// With `encrypted`, the store is encrypted and every command gets its key
/// file; a wrong key must then be refused without reading or changing
/// anything (never reported as corruption, never dropping an entry).
struct CorruptionSuite {
    enum Damage: String, CaseIterable {
        /// 1–8 bytes XORed at uniformly random offsets.
        case flipAnywhere = "flip-anywhere"
        /// 1–8 bytes XORed inside one meta, branch or leaf page.
        case flipStructure = "flip-btree-page"
        /// The file cut at a random length.
        case truncate
    }

    enum Outcome: String, CaseIterable {
        /// verify exited 3 and named the damage.
        case detected
        /// LMDB faulted in verify's child; the parent reported it (exit 3).
        case crashContained = "crash-contained"
        /// verify exited 0 and every key read back intact (the damage hit
        /// free or unused space).
        case harmless
        /// verify exited 0, a read then failed with an error (no bad bytes).
        case missedCaughtOnRead = "missed-caught-on-read"
        /// verify exited 1 (an error other than corruption).
        case error
        /// Bad bytes were returned as good. Must be 0.
        case silentCorruption = "SILENT-CORRUPTION"
        /// cachetool itself died. Must be 0.
        case toolCrash = "TOOL-CRASH"
    }

    let seed: UInt64
    let cases: Int
    let encrypted: Bool
    var counts: [Damage: [Outcome: Int]] = [:]
    var failures: [String] = []
    /// One line per case that was neither detected nor harmless: where the
    /// damage was and what verify and the reads said, so a miss can be replayed.
    var misses: [String] = []

    init(seed: UInt64, cases: Int, encrypted: Bool = false) {
        self.seed = seed
        self.cases = cases
        self.encrypted = encrypted
    }

    /// `--key-file` and the key file's path, for an encrypted suite.
    private var keyArguments: [String] = []

    mutating func run() async throws {
        let directory = try TemporaryDirectory("corruption")
        defer { directory.remove() }
        var random = SplitMix64(seed: seed)
        var configuration = StoreConfiguration()
        if encrypted {
            let key = try StoreKey(bytes: random.bytes(StoreKey.byteCount))
            let keyFile = directory.path("store.key")
            try KeyFile.write(key, to: keyFile)
            keyArguments = ["--key-file", keyFile]
            configuration.encryption = StoreConfiguration.Encryption(key: key)
        }
        // The original: raw chunks, zstd chunks, shared chunks, inline values,
        // and packed values (one batch: several small values to a pack row).
        let original = URL(fileURLWithPath: directory.path("original"))
        var values: [String: Data] = [:]
        values["raw"] = random.data(400_000)
        values["text"] = random.text(400_000)
        values["copy-of-raw"] = values["raw"]
        for index in 0..<12 { values["small\(index)"] = random.text(200 + index * 300) }
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let put = try await ToolProcess.cachetool(
                ["-s", original.path] + keyArguments + ["put", key, "-"], input: value)
            guard put.status == 0 else { throw ToolTestError("put \(key) failed: \(put.errors)") }
        }
        var packed: [String: Data] = [:]
        for index in 0..<24 { packed["packed\(index)"] = random.data(150 + index * 150) }
        do {
            let store = try MediaStore(directory: original, configuration: configuration)
            try store.performBatch { batch in
                for (key, value) in packed.sorted(by: { $0.key < $1.key }) { try batch.put(value, forKey: key) }
            }
            store.close()
        }
        values.merge(packed) { first, _ in first }
        let pristine = try Data(contentsOf: original.appendingPathComponent("data.mdb"))
        let structurePages = Self.structurePages(pristine)
        if encrypted { try await checkWrongKeyChangesNothing(original, directory: directory, random: &random) }

        for index in 0..<cases {
            let damage = Damage.allCases[index % Damage.allCases.count]
            var bytes = pristine
            var description = ""
            var offsets: [Int] = []
            switch damage {
            case .flipAnywhere, .flipStructure:
                let count = 1 + Int(random.next() % 8)
                let page = structurePages[Int(random.next() % UInt64(structurePages.count))]
                for _ in 0..<count {
                    let offset =
                        damage == .flipAnywhere
                        ? Int(random.next() % UInt64(bytes.count)) : page * 4096 + Int(random.next() % 4096)
                    bytes[offset] ^= UInt8(1 + random.next() % 255)
                    offsets.append(offset)
                }
                description = "\(damage.rawValue) at \(offsets)"
            case .truncate:
                let length = Int(random.next() % UInt64(bytes.count))
                bytes = bytes.prefix(length)
                description = "truncated to \(length) of \(pristine.count) bytes"
            }
            let copy = URL(fileURLWithPath: directory.path("case\(index)"))
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try bytes.write(to: copy.appendingPathComponent("data.mdb"))
            let (outcome, detail) = try await classify(copy, values: values)
            counts[damage, default: [:]][outcome, default: 0] += 1
            if outcome == .silentCorruption || outcome == .toolCrash {
                failures.append("case \(index) (seed \(seed)): \(description): \(outcome.rawValue)")
            }
            if outcome != .detected && outcome != .crashContained && outcome != .harmless {
                let pages = Set(offsets.map { $0 / 4096 }).sorted().map(String.init).joined(separator: ", ")
                misses.append(
                    "case \(index): \(description)" + (offsets.isEmpty ? "" : " (page \(pages))")
                        + ": \(outcome.rawValue): \(detail)")
                if let keep = ProcessInfo.processInfo.environment["CORRUPTION_KEEP"] {
                    try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
                    try bytes.write(to: URL(fileURLWithPath: keep).appendingPathComponent("case\(index).mdb"))
                    try pristine.write(to: URL(fileURLWithPath: keep).appendingPathComponent("pristine.mdb"))
                }
            }
            try? FileManager.default.removeItem(at: copy)
        }
    }

    /// The outcome, and for anything but a detection what verify or the
    /// reads said.
    private func classify(_ store: URL, values: [String: Data]) async throws -> (Outcome, String) {
        let verify = try await ToolProcess.cachetool(["-s", store.path] + keyArguments + ["verify", "--json"])
        if verify.signaled { return (.toolCrash, "verify killed by signal \(verify.status)") }
        switch verify.status {
        case 3: return (verify.json?["crashed"] as? Bool == true ? .crashContained : .detected, "")
        case 0: break
        default: return (.error, "verify exit \(verify.status): \(Self.firstLine(verify.errors))")
        }
        var failedReads: [String] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let cat = try await ToolProcess.cachetool(["-s", store.path] + keyArguments + ["cat", key])
            if cat.signaled { return (.toolCrash, "cat \(key) killed by signal \(cat.status)") }
            if cat.status == 0 && cat.output != value { return (.silentCorruption, "cat \(key) returned wrong bytes") }
            if cat.status != 0 { failedReads.append("cat \(key): exit \(cat.status): \(Self.firstLine(cat.errors))") }
        }
        return failedReads.isEmpty
            ? (.harmless, "") : (.missedCaughtOnRead, "verify clean; " + failedReads.joined(separator: "; "))
    }

    /// A wrong key is refused by verify, cat and a writing command alike,
    /// as a wrong key (exit 1), never as corruption; the file stays byte
    /// for byte as it was.
    private mutating func checkWrongKeyChangesNothing(
        _ store: URL, directory: TemporaryDirectory, random: inout SplitMix64
    ) async throws {
        let before = try Data(contentsOf: store.appendingPathComponent("data.mdb"))
        let wrongFile = directory.path("wrong.key")
        try KeyFile.write(try StoreKey(bytes: random.bytes(StoreKey.byteCount)), to: wrongFile)
        for command in [["verify", "--json"], ["cat", "raw"], ["rm", "raw"], ["expire"]] {
            let result = try await ToolProcess.cachetool(["-s", store.path, "--key-file", wrongFile] + command)
            if result.status != 1 || !result.errors.contains("encrypted under another key") {
                failures.append(
                    "wrong key, \(command.joined(separator: " ")): exit \(result.status): \(Self.firstLine(result.errors))"
                )
            }
        }
        if try Data(contentsOf: store.appendingPathComponent("data.mdb")) != before {
            failures.append("a wrong key changed data.mdb")
        }
    }

    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n").first ?? "").trimmingCharacters(in: .whitespaces)
    }

    /// Pages whose LMDB header says meta (0x08), branch (0x01) or leaf (0x02).
    static func structurePages(_ file: Data) -> [Int] {
        var pages: [Int] = []
        for page in 0..<(file.count / 4096) {
            let flags = UInt16(file[page * 4096 + 10]) | UInt16(file[page * 4096 + 11]) << 8
            if flags & 0x04 == 0 && flags & 0x0B != 0 { pages.append(page) }
        }
        return pages.isEmpty ? [0, 1] : pages
    }

    /// One line per damage kind with its outcome shares, and totals.
    var summary: String {
        var lines: [String] = []
        var totals: [Outcome: Int] = [:]
        for damage in Damage.allCases {
            let row = counts[damage] ?? [:]
            let total = row.values.reduce(0, +)
            for (outcome, count) in row { totals[outcome, default: 0] += count }
            lines.append("  \(damage.rawValue) (\(total) cases): " + Self.shares(row, total: total))
        }
        let all = totals.values.reduce(0, +)
        lines.append("  all (\(all) cases): " + Self.shares(totals, total: all))
        lines.append(contentsOf: misses.map { "  miss: \($0)" })
        return lines.joined(separator: "\n")
    }

    private static func shares(_ row: [Outcome: Int], total: Int) -> String {
        Outcome.allCases.compactMap { outcome in
            guard let count = row[outcome], count > 0 else { return nil }
            return
                "\(outcome.rawValue) \(count) (\(String(format: "%.0f", 100 * Double(count) / Double(max(1, total))))%)"
        }.joined(separator: ", ")
    }
}
