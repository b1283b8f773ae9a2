// The main job for now: stores a generated track, reads a range back,
// shows deduplication, a sparse fill in seek order, and the store's stats.
import Foundation
import MediaStore

func megabytes(_ bytes: Int) -> String { String(format: "%.2f MiB", Double(bytes) / 1_048_576) }

func milliseconds(since start: Date) -> String { String(format: "%.1f ms", Date().timeIntervalSince(start) * 1000) }

/// A stand-in for an MP3: an ID3 tag, then incompressible frames.
func generatedTrack(bytes count: Int, seed: UInt64) -> Data {
    var state = seed
    var data = Data("ID3\u{4}\0\0\0\0\0\0".utf8)
    data.reserveCapacity(count)
    while data.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        withUnsafeBytes(of: z ^ (z >> 31)) { data.append(contentsOf: $0) }
    }
    return data.prefix(count)
}

let arguments = CommandLine.arguments
let directory: URL
let isTemporary: Bool
if let index = arguments.firstIndex(of: "--store"), index + 1 < arguments.count {
    directory = URL(fileURLWithPath: arguments[index + 1])
    isTemporary = false
} else {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("mediacache-demo-\(UUID().uuidString)")
    isTemporary = true
}
defer { if isTemporary { try? FileManager.default.removeItem(at: directory) } }

do {
    let store = try MediaStore(directory: directory, configuration: StoreConfiguration(sizeLimit: 256 << 20))
    print("Store: \(directory.path)\n")

    let track = generatedTrack(bytes: 8_000_000, seed: 42)
    let url = "https://cdn.example.com/tracks/4711.mp3?token=first"
    var start = Date()
    let info = try store.put(
        track, forKey: url,
        options: WriteOptions(expiry: .after(7 * 86_400), metadata: EntryMetadata(mimeType: "audio/mpeg", etag: "\"v1\"")))
    print("1. Stored \(megabytes(track.count)) under \(url) in \(milliseconds(since: start))")
    print("   content digest \(info.contentDigest!.hexString) (the same as `xxh128sum` of the file)")

    start = Date()
    let range = 3_000_000..<(3_000_000 + 65_536)
    let slice = try store.read(forKey: url, range: range)
    print("2. Read bytes \(range.lowerBound)..<\(range.upperBound) back in \(milliseconds(since: start)): "
        + (slice == track[range] ? "identical" : "DIFFERENT"))

    let before = try store.statistics()
    let renamed = "https://cdn.example.com/tracks/4711.mp3?token=second"
    try store.put(track, forKey: renamed)
    let after = try store.statistics()
    print("3. Stored the same bytes under a second URL: chunks \(before.chunkCount) → \(after.chunkCount), "
        + "stored \(megabytes(before.storedBytes)) → \(megabytes(after.storedBytes)) (deduplicated)")

    let other = generatedTrack(bytes: 3_000_000, seed: 7)
    let sparseKey = "https://cdn.example.com/tracks/99.mp3"
    try store.prepareEntry(forKey: sparseKey, length: other.count)
    let chunk = store.configuration.chunkSize
    let seekChunk = 5 * chunk..<(6 * chunk)
    try store.write(other[seekChunk], at: seekChunk.lowerBound, forKey: sparseKey)
    print("4. A seek filled the middle first; cached ranges: \(try store.cachedRanges(forKey: sparseKey))")
    var offset = 0
    while offset < other.count {
        let end = min(offset + chunk, other.count)
        try store.write(other[offset..<end], at: offset, forKey: sparseKey)
        offset = end
    }
    let sparse = try store.info(forKey: sparseKey)!
    print("   filled the rest: complete = \(sparse.isComplete), digest matches = "
        + "\(sparse.contentDigest == ContentDigest(of: other))")

    let stats = try store.statistics()
    print("\n| statistic | value |\n|---|---|")
    print("| entries (complete) | \(stats.entryCount) (\(stats.completeCount)) |")
    print("| logical bytes | \(megabytes(stats.logicalBytes)) |")
    print("| stored bytes | \(megabytes(stats.storedBytes)) |")
    print("| unique chunks | \(stats.chunkCount) |")
    print("| data.mdb in use | \(megabytes(stats.fileBytes)) |")
    print("| map size | \(megabytes(stats.mapSize)) |")
    let report = try store.verify()
    print("\nverify: \(report.entries) entries, \(report.chunksRead) chunk reads, "
        + (report.isClean ? "clean" : "PROBLEMS: \(report.problems)"))
} catch {
    print("demo failed: \(error)")
    exit(1)
}
