import Foundation
import MediaHLS
import MediaStore
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The read commands: stats, ls, info, cat, readers.
extension CacheTool {
    func stats(_ parsed: ParsedArguments) throws {
        let store = try openStore(parsed)
        let stats = try store.statistics()
        // Inline values are stored as they are: neither compressed nor shared.
        let inlineBytes = try store.entries().reduce(0) { $0 + ($1.chunkCount == 0 ? $1.cachedBytes : 0) }
        let compression =
            stats.storedBytes == 0 ? 1 : Double(stats.uniqueChunkBytes + inlineBytes) / Double(stats.storedBytes)
        let dedupSaved = max(0, stats.logicalBytes - inlineBytes - stats.uniqueChunkBytes)
        let liveReaders = store.readers().filter { !$0.isStale }.count
        let mapUse = stats.mapSize == 0 ? 0 : Double(stats.fileBytes) / Double(stats.mapSize)
        if parsed.flag("json") {
            printJSON(
                "stats",
                [
                    ("store", .string(store.directory.path)),
                    ("entries", .int(stats.entryCount)),
                    ("completeEntries", .int(stats.completeCount)),
                    ("partialEntries", .int(stats.entryCount - stats.completeCount)),
                    ("logicalBytes", .int(stats.logicalBytes)),
                    ("storedBytes", .int(stats.storedBytes)),
                    ("uniqueChunkBytes", .int(stats.uniqueChunkBytes)),
                    ("chunks", .int(stats.chunkCount)),
                    ("compressionRatio", .double(Self.rounded(compression))),
                    ("dedupSavedBytes", .int(dedupSaved)),
                    ("mapSize", .int(stats.mapSize)),
                    ("fileBytes", .int(stats.fileBytes)),
                    ("mapUsedRatio", .double(Self.rounded(mapUse))),
                    ("fileToLiveRatio", .double(Self.rounded(stats.fileToLiveRatio))),
                    ("readers", .int(liveReaders)),
                    ("readerSlots", .int(stats.readers)),
                    ("evictions", .int(stats.evictions)),
                ])
            return
        }
        let rows: [(String, String)] = [
            ("store", store.directory.path),
            (
                "entries",
                "\(stats.entryCount) (\(stats.completeCount) complete, \(stats.entryCount - stats.completeCount) partial)"
            ),
            ("logical bytes", "\(stats.logicalBytes) (\(ByteSize.format(stats.logicalBytes)))"),
            ("stored bytes", "\(stats.storedBytes) (\(ByteSize.format(stats.storedBytes)))"),
            ("unique chunks", "\(stats.chunkCount), \(ByteSize.format(stats.uniqueChunkBytes)) uncompressed"),
            ("compression", String(format: "%.2fx (unique bytes / stored bytes, chunk headers included)", compression)),
            ("dedup savings", "\(dedupSaved) (\(ByteSize.format(dedupSaved)))"),
            (
                "map",
                "\(ByteSize.format(stats.fileBytes)) used of \(ByteSize.format(stats.mapSize)) (\(String(format: "%.1f", mapUse * 100))%)"
            ),
            ("file / live", String(format: "%.2f", stats.fileToLiveRatio)),
            ("readers", "\(liveReaders) active"),
            ("evictions", String(stats.evictions)),
        ]
        for (label, value) in rows {
            console.print(label.padding(toLength: 15, withPad: " ", startingAt: 0) + value)
        }
    }

    static func rounded(_ value: Double) -> Double {
        (value * 10000).rounded() / 10000
    }

    func list(_ parsed: ParsedArguments) throws {
        if parsed.flag("complete") && parsed.flag("partial") {
            throw UsageError("--complete and --partial exclude each other", command: "ls")
        }
        let sort = parsed.value("sort") ?? "key"
        guard ["key", "size", "access", "expiry"].contains(sort) else {
            throw UsageError("--sort takes key, size, access or expiry, not '\(sort.prefix(40))'", command: "ls")
        }
        let store = try openStore(parsed)
        var entries = try store.entries()
        if let prefix = parsed.value("prefix") { entries = entries.filter { $0.key.hasPrefix(prefix) } }
        if let pattern = parsed.value("match") { entries = entries.filter { fnmatch(pattern, $0.key, 0) == 0 } }
        if parsed.flag("complete") { entries = entries.filter(\.isComplete) }
        if parsed.flag("partial") { entries = entries.filter { !$0.isComplete } }
        switch sort {
        case "size": entries.sort { ($0.cachedBytes, $0.key) > ($1.cachedBytes, $1.key) }
        case "access": entries.sort { ($0.lastAccess, $0.key) > ($1.lastAccess, $1.key) }
        case "expiry":
            entries.sort {
                ($0.expiry ?? .distantFuture, $0.key) < ($1.expiry ?? .distantFuture, $1.key)
            }
        default: entries.sort { $0.key < $1.key }
        }
        if parsed.flag("reverse") { entries.reverse() }
        let now = Date()
        // Only a pinned entry has holders: one lookup for each of those.
        let holders = try entries.map { $0.isPinned ? try store.holders(of: $0.key) : [] }
        if parsed.flag("json") {
            printJSON(
                "ls",
                [
                    ("store", .string(store.directory.path)),
                    (
                        "entries",
                        .array(
                            zip(entries, holders).map {
                                .object(EntryFormatting.json($0, holders: $1, now: now))
                            })
                    ),
                ])
            return
        }
        for (entry, held) in zip(entries, holders) {
            let size = EntryFormatting.size(entry)
            console.print(
                [
                    size.padding(toLength: max(size.count, 12), withPad: " ", startingAt: 0),
                    EntryFormatting.flags(entry, now: now), EntryFormatting.date(entry.lastAccess),
                    EntryFormatting.date(entry.expiry).padding(toLength: 20, withPad: " ", startingAt: 0),
                    Self.printable(entry.key),
                ].joined(separator: " ")
                    + (held.isEmpty ? "" : "  (held by \(held.map(Self.printable).joined(separator: ", ")))"))
        }
    }

    /// A key with control characters escaped, so a listing stays one line per entry.
    static func printable(_ key: String) -> String {
        String(
            key.unicodeScalars.flatMap { scalar -> [Character] in
                scalar.value < 0x20 || scalar.value == 0x7F
                    ? Array("\\x" + String(format: "%02x", scalar.value)) : [Character(scalar)]
            })
    }

    func info(_ parsed: ParsedArguments) throws {
        let key = parsed.positionals[0]
        let store = try openStore(parsed)
        guard let info = try store.info(forKey: key) else { throw StoreError.notFound(key: key) }
        let holders = try store.holders(of: key)
        let ranges = try store.cachedRanges(forKey: key)
        let sharing = try store.chunkSharing(forKey: key)
        let asset = try HLSAssetSummary.asset(key, in: store)
        if parsed.flag("json") {
            printJSON(
                "info",
                EntryFormatting.json(info, holders: holders) + (asset.map { [("hls", .object(Self.json($0)))] } ?? [])
                    + [
                        ("cachedRanges", .array(ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })),
                        ("sharedChunks", .int(sharing?.sharedChunkCount ?? 0)),
                        ("sharingKeys", .array((sharing?.sharingKeys ?? []).map(JSONValue.string))),
                    ])
            return
        }
        let rows: [(String, String)] =
            [
                ("key", Self.printable(info.key)),
                ("length", info.length.map(String.init) ?? "unknown"),
                ("cached", "\(info.cachedBytes) bytes: \(EntryFormatting.ranges(ranges))"),
                ("complete", info.isComplete ? "yes" : "no"),
                ("digest", info.contentDigest?.hexString ?? "-"),
                ("mime", info.metadata.mimeType ?? "-"),
                ("etag", info.metadata.etag ?? "-"),
                ("last-modified", info.metadata.lastModified ?? "-"),
                ("created", EntryFormatting.date(info.created)),
                ("last access", EntryFormatting.date(info.lastAccess)),
                ("expiry", EntryFormatting.date(info.expiry) + (info.isExpired() ? " (expired)" : "")),
                ("pinned", info.isPinned ? "yes" : "no"),
                ("held by", holders.isEmpty ? "-" : holders.map(Self.printable).joined(separator: ", ")),
                ("cost", String(info.cost)),
                ("chunks", "\(info.chunkCount) of \(info.chunkSize) bytes"),
                (
                    "shared",
                    "\(sharing?.sharedChunkCount ?? 0) chunks with \(sharing?.sharingKeys.count ?? 0) other keys"
                ),
            ] + info.metadata.userInfo.sorted { $0.key < $1.key }.map { ("user \($0.key)", $0.value) }
        for (label, value) in rows {
            console.print(label.padding(toLength: 15, withPad: " ", startingAt: 0) + value)
        }
        if let asset {
            console.print("hls asset")
            printHLS(asset)
        }
    }

    func cat(_ parsed: ParsedArguments) throws {
        let key = parsed.positionals[0]
        var spec: ByteRangeSpec?
        if let text = parsed.value("range") {
            guard let parsedRange = ByteRangeSpec.parse(text) else {
                throw UsageError("bad range '\(text.prefix(40))': use A-B (inclusive), A- or -N", command: "cat")
            }
            spec = parsedRange
        }
        let store = try openStore(parsed)
        guard let info = try store.info(forKey: key) else { throw StoreError.notFound(key: key) }
        let length = info.length ?? (info.isComplete ? info.cachedBytes : nil)
        let range: Range<Int>
        if let spec {
            guard let resolved = spec.resolve(length: length) else {
                throw ToolError(
                    "bad range \(parsed.value("range") ?? ""): \(key.prefix(200)) has \(length.map { "\($0) bytes" } ?? "an unknown length")"
                )
            }
            range = resolved
        } else {
            guard info.isComplete, let length else {
                let ranges = try store.cachedRanges(forKey: key)
                throw ToolError(
                    "\(key.prefix(200)) is partial (cached: \(EntryFormatting.ranges(ranges))); use --range")
            }
            range = 0..<length
        }
        guard !range.isEmpty else { return }
        // The range was sized from this version: never stream another one into it.
        try store.read(forKey: key, range: range, includeExpired: true, version: info.version) { data in
            console.write(data)
        }
    }

    func readers(_ parsed: ParsedArguments) throws {
        let store = try openStore(parsed)
        var cleared = 0
        if parsed.flag("clear") { cleared = store.clearStaleReaders() }
        let slots = store.readers()
        if parsed.flag("json") {
            var fields: [(String, JSONValue)] = [
                ("store", .string(store.directory.path)),
                (
                    "readers",
                    .array(
                        slots.map { slot in
                            .object([
                                ("pid", .int(Int(slot.pid))), ("thread", .string(slot.thread)),
                                ("transaction", .optional(slot.transactionID, { .int(Int(truncatingIfNeeded: $0)) })),
                                ("stale", .bool(slot.isStale)),
                            ])
                        })
                ),
            ]
            if parsed.flag("clear") { fields.append(("cleared", .int(cleared))) }
            printJSON("readers", fields)
            return
        }
        if parsed.flag("clear") { console.print("cleared \(cleared) stale reader slot\(cleared == 1 ? "" : "s")") }
        if slots.isEmpty { console.print("no active readers") }
        for slot in slots {
            console.print(
                "pid \(slot.pid)  txn \(slot.transactionID.map(String.init) ?? "-")  \(slot.isStale ? "stale (process gone)" : "live")"
            )
        }
    }
}
