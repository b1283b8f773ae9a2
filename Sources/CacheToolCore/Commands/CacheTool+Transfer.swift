import Foundation
import MediaStore

/// `export DIR` and `import DIR`: complete entries as plain files (one
/// per distinct content, named by its XXH3-128 digest, so `xxh128sum`
/// checks them) under `DIR/files/`, described by `DIR/manifest.json`.
extension CacheTool {
    static let manifestName = "manifest.json"

    func export(_ parsed: ParsedArguments) throws {
        let target = URL(fileURLWithPath: parsed.positionals[0])
        let files = target.appendingPathComponent("files")
        let manager = FileManager.default
        if manager.fileExists(atPath: target.appendingPathComponent(Self.manifestName).path) {
            throw ToolError("\(target.path) already holds an export (manifest.json); choose a new directory")
        }
        let store = try openStore(parsed)
        do {
            try manager.createDirectory(at: files, withIntermediateDirectories: true)
        } catch {
            throw ToolError("cannot create \(files.path): \(error.localizedDescription)")
        }
        var entries = try store.entries().sorted { $0.key < $1.key }
        if let prefix = parsed.value("prefix") { entries = entries.filter { $0.key.hasPrefix(prefix) } }
        var items: [JSONValue] = []
        var skipped: [JSONValue] = []
        var bytes = 0
        for (index, entry) in entries.enumerated() {
            console.progress("export: \(index + 1)/\(entries.count) entries, \(ByteSize.format(bytes))")
            guard entry.isComplete, let digest = entry.contentDigest, let length = entry.length else {
                skipped.append(.object([("key", .string(entry.key)), ("reason", .string("partial"))]))
                continue
            }
            let name = "files/\(digest.hexString)"
            let file = target.appendingPathComponent(name)
            if !manager.fileExists(atPath: file.path) {
                let temporary = files.appendingPathComponent(".\(digest.hexString).part")
                guard manager.createFile(atPath: temporary.path, contents: nil),
                    let handle = FileHandle(forWritingAtPath: temporary.path)
                else { throw ToolError("cannot write \(temporary.path)") }
                do {
                    // Bound to the listed version: the file is named by its digest.
                    try store.read(forKey: entry.key, range: 0..<length, includeExpired: true, version: entry.version) {
                        data in
                        try handle.write(contentsOf: data)
                    }
                    try handle.close()
                    try manager.moveItem(at: temporary, to: file)
                } catch StoreError.changedDuringRead, StoreError.notFound {
                    // Replaced or removed since the listing (another process): not exported.
                    try? handle.close()
                    try? manager.removeItem(at: temporary)
                    skipped.append(.object([("key", .string(entry.key)), ("reason", .string("changed"))]))
                    continue
                } catch let error as StoreError {
                    try? handle.close()
                    try? manager.removeItem(at: temporary)
                    throw error
                } catch {
                    try? manager.removeItem(at: temporary)
                    throw ToolError("cannot write \(file.path): \(error.localizedDescription)")
                }
                bytes += length
            }
            items.append(
                .object([
                    ("key", .string(entry.key)), ("file", .string(name)), ("length", .int(length)),
                    ("contentDigest", .string(digest.hexString)),
                    ("mimeType", .optional(entry.metadata.mimeType, JSONValue.string)),
                    ("etag", .optional(entry.metadata.etag, JSONValue.string)),
                    ("lastModified", .optional(entry.metadata.lastModified, JSONValue.string)),
                    (
                        "userInfo",
                        .object(entry.metadata.userInfo.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
                    ),
                    ("expiry", .date(entry.expiry)), ("pinned", .bool(entry.isPinned)), ("cost", .int(entry.cost)),
                ]))
        }
        let manifest = JSONValue.object([
            ("schema", .string("cachetool-export/1")), ("exported", .date(Date())),
            ("entries", .array(items)), ("skipped", .array(skipped)),
        ])
        do {
            try Data(manifest.rendered().utf8).write(
                to: target.appendingPathComponent(Self.manifestName), options: .atomic)
        } catch {
            throw ToolError("cannot write the manifest: \(error.localizedDescription)")
        }
        console.endProgress()
        if parsed.flag("json") {
            printJSON(
                "export",
                [
                    ("store", .string(store.directory.path)), ("directory", .string(target.path)),
                    ("exported", .int(items.count)), ("skippedPartial", .int(skipped.count)),
                    ("fileBytes", .int(bytes)),
                ])
        } else {
            console.print(
                "exported \(items.count) entries (\(ByteSize.format(bytes)) in files) to \(target.path)"
                    + (skipped.isEmpty ? "" : "; skipped \(skipped.count) partial"))
        }
    }

    func importEntries(_ parsed: ParsedArguments) throws {
        let source = URL(fileURLWithPath: parsed.positionals[0])
        let manifestURL = source.appendingPathComponent(Self.manifestName)
        guard let data = FileManager.default.contents(atPath: manifestURL.path) else {
            throw ToolError("no \(Self.manifestName) in \(source.path)")
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            root["schema"] as? String == "cachetool-export/1", let entries = root["entries"] as? [[String: Any]]
        else { throw ToolError("\(manifestURL.path) is not a cachetool export manifest") }
        let store = try openStore(parsed, write: true, create: true)
        var imported = 0
        var failures: [String] = []
        let dates = ISO8601DateFormatter()
        for (index, item) in entries.enumerated() {
            console.progress("import: \(index + 1)/\(entries.count) entries")
            guard let key = item["key"] as? String, let name = item["file"] as? String, !name.contains(".."),
                let digest = item["contentDigest"] as? String
            else {
                failures.append("entry \(index): missing key, file or contentDigest")
                continue
            }
            var options = WriteOptions(pinned: item["pinned"] as? Bool ?? false)
            options.metadata = EntryMetadata(
                mimeType: item["mimeType"] as? String, etag: item["etag"] as? String,
                lastModified: item["lastModified"] as? String, userInfo: item["userInfo"] as? [String: String] ?? [:])
            options.cost = item["cost"] as? Int ?? 0
            if let text = item["expiry"] as? String, let date = dates.date(from: text) {
                options.expiry = .at(date)
            } else {
                options.expiry = .never
            }
            let file = source.appendingPathComponent(name)
            guard let handle = FileHandle(forReadingAtPath: file.path) else {
                failures.append("\(key): cannot read \(name)")
                continue
            }
            defer { try? handle.close() }
            let stored = try stream(
                handle, into: store, key: key, options: options, expectedLength: item["length"] as? Int)
            if stored.contentDigest?.hexString != digest {
                // Only the entry just imported, not one written since by someone else.
                _ = try? store.remove(forKey: key, version: stored.version)
                failures.append("\(key): \(name) does not match its digest \(digest); not imported")
                continue
            }
            imported += 1
        }
        console.endProgress()
        if parsed.flag("json") {
            printJSON(
                "import",
                [
                    ("store", .string(store.directory.path)), ("imported", .int(imported)),
                    ("failed", .array(failures.map(JSONValue.string))),
                ])
        } else {
            console.print("imported \(imported) of \(entries.count) entries")
        }
        if !failures.isEmpty {
            for failure in failures.dropLast() { console.printError("cachetool: \(failure)") }
            throw ToolError(failures[failures.count - 1])
        }
    }
}
