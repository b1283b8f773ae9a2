import Foundation
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The write commands: put, rm, pin/unpin, expire, evict, compact.
extension CacheTool {
    func put(_ parsed: ParsedArguments) throws {
        let key = parsed.positionals[0]
        let path = parsed.positionals[1]
        var options = WriteOptions(pinned: parsed.flag("pin"))
        if let text = parsed.value("expiry") {
            guard let expiry = ExpirySpec.parse(text) else {
                throw UsageError(
                    "bad --expiry '\(text.prefix(40))': use never, 90s, 15m, 2h, 7d or an ISO 8601 date", command: "put"
                )
            }
            options.expiry = expiry
        }
        options.metadata.mimeType = parsed.value("mime")
        let input: FileHandle
        // Only shown in the progress line: a file of /proc or /sys says 0
        // or 4096 bytes whatever it holds, so the entry is what is read.
        var size: Int?
        if path == "-" {
            input = .standardInput
        } else {
            var status = stat()
            guard stat(path, &status) == 0 else {
                throw ToolError("put: cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if status.st_mode & S_IFMT == S_IFDIR { throw ToolError("put: \(path) is a directory") }
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ToolError("put: cannot read \(path): \(String(cString: strerror(errno)))")
            }
            input = handle
            if status.st_mode & S_IFMT == S_IFREG && status.st_size > 0 { size = Int(exactly: status.st_size) }
        }
        let store = try openStore(parsed, write: true, create: true)
        let info = try stream(input, into: store, key: key, options: options, expectedLength: nil, size: size)
        if path != "-" { try? input.close() }
        _ = info
    }

    /// Streams `input` into an entry in 1 MiB pieces: to its end, or at
    /// most `limit` bytes. `size`, when known, is shown in the progress line.
    func stream(
        _ input: FileHandle, into store: MediaStore, key: String, options: WriteOptions, expectedLength: Int?,
        limit: Int? = nil, size: Int? = nil
    ) throws -> EntryInfo {
        let writer = try store.makeWriter(forKey: key, options: options, expectedLength: expectedLength)
        while true {
            let piece: Data?
            let wanted = min(1 << 20, limit.map { $0 - writer.bytesWritten } ?? .max)
            guard wanted > 0 else { break }
            do {
                piece = try input.read(upToCount: wanted)
            } catch {
                writer.cancel()
                throw ToolError("cannot read the input: \(Self.reason(error))")
            }
            guard let piece, !piece.isEmpty else { break }
            try writer.append(piece)
            console.progress(
                "put \(Self.printable(String(key.prefix(60)))): \(ByteSize.format(writer.bytesWritten))"
                    + ((expectedLength ?? size).map { " of \(ByteSize.format($0))" } ?? ""))
        }
        let info = try writer.finish()
        console.endProgress()
        return info
    }

    /// A system error as its one-line text: `strerror` for a POSIX code,
    /// also one wrapped in a Foundation error (how FileHandle reports them).
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain, let code = Int32(exactly: error.code) {
            return String(cString: strerror(code))
        }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError { return reason(underlying) }
        return error.localizedDescription
    }

    func remove(_ parsed: ParsedArguments) throws {
        let store = try openStore(parsed, write: true)
        let saved = try DownloadIndex(store: store).savedRecords()
        var missing: [String] = []
        for key in parsed.positionals {
            try warnBeforeRemoving(key, from: store, saved: saved)
            // The master playlist of an HLS asset: every entry of the asset.
            if let asset = try HLSAssetSummary.asset(key, in: store) {
                // A resource another asset holds stays, as that asset's.
                let own = HLSDownloader.holder(ofAsset: key)
                var removed = 0
                for entry in asset.entries {
                    let others = try store.holders(of: entry.key).filter { $0.hasPrefix("hls/") && $0 != own }
                    guard others.isEmpty else { continue }
                    // Written before holds: kept by the other assets its `hls.keepers`
                    // names (the app's hold stands for them), and no longer this one's.
                    let keepers = HLSEntryMetadata.keepers(of: entry.metadata.userInfo)
                        .filter { !ExactKey.equal($0, key) }
                    guard keepers.isEmpty else {
                        var metadata = entry.metadata
                        metadata.userInfo[HLSEntryMetadata.keepers] = keepers.joined(separator: "\n")
                        try store.setMetadata(metadata, forKey: entry.key, version: entry.version)
                        continue
                    }
                    if try store.remove(forKey: entry.key, version: entry.version) { removed += 1 }
                }
                console.printError(
                    "cachetool: removed the HLS asset \(Self.printable(String(key.prefix(200)))) (\(removed) entries)"
                )
                continue
            }
            if try !store.remove(forKey: key) { missing.append(key) }
        }
        try reportMissing(missing)
    }

    /// Says on standard error what removing `key` takes from whoever holds
    /// it (`MediaStore.holders(of:)`): a `DownloadQueue`'s download (its
    /// queue fetches it again when it next opens the store; `saved`, the
    /// queue's records, name its status), the queue's own index (its
    /// downloads are forgotten), or another holder (an HLS asset, an
    /// offline download, the app). The removal goes on: `rm` does what it
    /// is asked.
    private func warnBeforeRemoving(_ key: String, from store: MediaStore, saved: [DownloadRecord]) throws {
        let name = Self.printable(String(key.prefix(200)))
        if key == DownloadIndex.key {
            console.printError(
                "cachetool: \(name) is the download queue's index: its downloads are forgotten, and their entries stay held"
            )
            return
        }
        let holders = try store.holders(of: key)
        let download = holders.lazy.compactMap(DownloadQueue.download(ofHolder:)).compactMap { id in
            saved.first { $0.id == id }
        }.first
        if let download {
            let asset = try store.info(forKey: key)?.metadata.userInfo[HLSEntryMetadata.asset]
            if let asset, !ExactKey.equal(asset, key) {
                console.printError(
                    "cachetool: \(name) belongs to the HLS asset \(Self.printable(String(asset.prefix(200)))), which a download of the store's download queue holds (\(download.status)): the queue still counts on it and downloads it again; remove the download through the queue to let it go"
                )
            } else {
                console.printError(
                    "cachetool: \(name) belongs to a download of the store's download queue (\(download.status)): the queue still counts on it and downloads it again; remove the download through the queue to let it go"
                )
            }
        } else if !holders.isEmpty {
            console.printError(
                "cachetool: \(name) was held (kept from eviction) by \(holders.map(Self.printable).joined(separator: ", "))"
            )
        }
    }

    /// `pin` holds each key for `--holder` (the app's holder by default), `unpin` releases that hold;
    /// an entry that stays held by others says so.
    func pin(_ parsed: ParsedArguments, _ pinned: Bool) throws {
        let holder = parsed.value("holder") ?? MediaStore.appHolder
        let store = try openStore(parsed, write: true)
        var missing: [String] = []
        for key in parsed.positionals {
            do {
                if pinned {
                    try store.hold(key, by: holder)
                    continue
                }
                guard try store.info(forKey: key) != nil else { throw StoreError.notFound(key: key) }
                let released = try store.release(key, by: holder)
                let others = try store.holders(of: key)
                if !released {
                    console.printError("cachetool: \(Self.printable(key)) was not held by \(Self.printable(holder))")
                }
                if !others.isEmpty {
                    console.printError(
                        "cachetool: \(Self.printable(key)) stays held by \(others.map(Self.printable).joined(separator: ", "))"
                    )
                }
            } catch StoreError.notFound {
                missing.append(key)
            }
        }
        try reportMissing(missing)
    }

    private func reportMissing(_ missing: [String]) throws {
        guard !missing.isEmpty else { return }
        for key in missing.dropLast() {
            console.printError("cachetool: no entry for key \(Self.printable(String(key.prefix(200))))")
        }
        throw ToolError("no entry for key \(Self.printable(String(missing[missing.count - 1].prefix(200))))")
    }

    func expire(_ parsed: ParsedArguments) throws {
        let store = try openStore(parsed, write: true)
        let removed = try store.removeExpired()
        if parsed.flag("json") {
            printJSON("expire", [("store", .string(store.directory.path)), ("removed", .int(removed))])
        } else {
            console.print("removed \(removed) expired entr\(removed == 1 ? "y" : "ies")")
        }
    }

    func evict(_ parsed: ParsedArguments) throws {
        guard let text = parsed.value("to") else { throw UsageError("evict needs --to SIZE", command: "evict") }
        guard let target = ByteSize.parse(text) else {
            throw UsageError(
                "bad size '\(text.prefix(40))': use bytes or a unit such as 500M or 2GiB", command: "evict")
        }
        let store = try openStore(parsed, write: true)
        let evicted = try store.evict(toBytes: target)
        let stored = try store.statistics().storedBytes
        if parsed.flag("json") {
            printJSON(
                "evict",
                [
                    ("store", .string(store.directory.path)), ("evicted", .int(evicted)), ("storedBytes", .int(stored)),
                ])
        } else {
            console.print("evicted \(evicted) entr\(evicted == 1 ? "y" : "ies"); \(ByteSize.format(stored)) stored")
        }
    }

    func compact(_ parsed: ParsedArguments) throws {
        let directory = storeDirectory(parsed)
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) else {
            throw ToolError("no store at \(directory.path) (no data.mdb in it)")
        }
        console.progress("compacting \(directory.path) ...")
        let report = try MediaStore.compact(directory: directory)
        console.endProgress()
        if parsed.flag("json") {
            printJSON(
                "compact",
                [
                    ("store", .string(directory.path)), ("bytesBefore", .int(report.bytesBefore)),
                    ("bytesAfter", .int(report.bytesAfter)),
                ])
        } else {
            console.print("compacted: \(ByteSize.format(report.bytesBefore)) -> \(ByteSize.format(report.bytesAfter))")
        }
    }
}
