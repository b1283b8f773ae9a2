import Foundation
import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        let manifest: ImportManifest
        do {
            manifest = try ImportManifest(try Self.readManifest(manifestURL))
        } catch let error as ImportManifest.ManifestError {
            throw ToolError("import: \(manifestURL.path) is not a cachetool export manifest: \(error)")
        }
        guard let root = Self.resolvedPath(source.path) else {
            throw ToolError("import: cannot resolve \(source.path): \(String(cString: strerror(errno)))")
        }
        let store = try openStore(parsed, write: true, create: true)
        var imported = 0
        var failures = manifest.errors.map { ($0.number, "import: \($0)") }
        for (index, entry) in manifest.entries.enumerated() {
            console.progress("import: \(index + 1)/\(manifest.entries.count) entries")
            let options = WriteOptions(
                expiry: entry.expiry.map { .at($0) } ?? .never, metadata: entry.metadata, cost: entry.cost,
                pinned: entry.pinned)
            let name = "file '\(Self.printable(entry.file))'"
            let stored: EntryInfo
            do {
                let handle = try Self.openExportFile(entry, root: root)
                defer { try? handle.close() }
                stored = try stream(
                    handle, into: store, key: entry.key, options: options, expectedLength: entry.length,
                    limit: entry.length)
            } catch let error as ToolError {
                failures.append((entry.number, "import: entry \(entry.number): \(name) \(error.message)"))
                continue
            } catch StoreError.lengthMismatch(_, _, let actual) {
                failures.append((entry.number, "import: entry \(entry.number): \(name) ended after \(actual) bytes"))
                continue
            }
            if stored.contentDigest?.hexString != entry.contentDigest {
                // Only the entry just imported, not one written since by someone else.
                _ = try? store.remove(forKey: entry.key, version: stored.version)
                failures.append(
                    (
                        entry.number,
                        "import: entry \(entry.number): \(name) does not match its digest \(entry.contentDigest); not imported"
                    ))
                continue
            }
            imported += 1
        }
        console.endProgress()
        let messages = failures.sorted { $0.0 < $1.0 }.map(\.1)
        if parsed.flag("json") {
            printJSON(
                "import",
                [
                    ("store", .string(store.directory.path)), ("imported", .int(imported)),
                    ("failed", .array(messages.map(JSONValue.string))),
                ])
        } else {
            console.print("imported \(imported) of \(manifest.count) entries")
        }
        if !messages.isEmpty {
            for failure in messages.dropLast() { console.printError("cachetool: \(failure)") }
            throw ToolError(messages[messages.count - 1])
        }
    }

    /// The manifest's bytes: a regular file (following a symlink) only,
    /// so that a device or FIFO named manifest.json is not read forever.
    static func readManifest(_ url: URL) throws -> Data {
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            throw ToolError("import: no \(manifestName) in \(url.deletingLastPathComponent().path)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ToolError("import: \(url.path) is not a regular file")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ToolError("import: cannot read \(url.path)")
        }
        return data
    }

    /// `path` with every symlink resolved, or `nil` (see `errno`).
    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Opens an entry's file: a regular file inside the export directory
    /// `root` once symlinks are resolved, of exactly the declared length.
    /// Throws a `ToolError` whose message completes "file 'x' …".
    static func openExportFile(_ entry: ImportManifest.Entry, root: String) throws -> FileHandle {
        let path = (root as NSString).appendingPathComponent(entry.file)
        guard let resolved = resolvedPath(path) else {
            throw ToolError("cannot be read: \(String(cString: strerror(errno)))")
        }
        guard resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
            throw ToolError("is outside the export")
        }
        var status = stat()
        // Checked before opening too: opening a device or FIFO can block or act.
        guard stat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ToolError("is not a regular file")
        }
        let descriptor = open(resolved, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw ToolError("cannot be read: \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ToolError("is not a regular file")
        }
        guard status.st_size == entry.length else {
            throw ToolError("has \(status.st_size) bytes, not the \(entry.length) the manifest says")
        }
        return handle
    }
}
