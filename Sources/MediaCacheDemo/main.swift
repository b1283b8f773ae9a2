// The main job: nginx on loopback serves a real MP3; the track is played
// twice through a StreamingItem with a seek, and each play shows where its
// bytes came from. Then the store's stats. Nothing to configure.
import Foundation
import LoopbackNginx
import MediaStore
import MediaStreaming

func formatBytes(_ bytes: Int) -> String {
    bytes >= 1 << 20
        ? String(format: "%.2f MiB", Double(bytes) / 1_048_576)
        : bytes >= 1024 ? String(format: "%.1f KiB", Double(bytes) / 1024) : "\(bytes) B"
}

func formatDuration(_ duration: Duration?) -> String {
    guard let duration else { return "-" }
    let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return ms < 1 ? String(format: "%.0f µs", ms * 1000) : String(format: "%.1f ms", ms)
}

func row(_ cells: [String], widths: [Int]) -> String {
    zip(cells, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }.joined(
        separator: " | ")
}

let work = FileManager.default.temporaryDirectory.appendingPathComponent("mediacache-demo-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: work) }

do {
    let root = work.appendingPathComponent("www")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let track = try DemoTrack.make(in: root)
    let length = try Data(contentsOf: track).count
    let server = try LoopbackNginx(serving: root, in: work.appendingPathComponent("nginx"))
    defer { server.stop() }
    let url = server.url("track.mp3")

    let chunkSize = 64 * 1024
    let store = try MediaStore(
        directory: work.appendingPathComponent("store"),
        configuration: StoreConfiguration(sizeLimit: 64 << 20, chunkSize: chunkSize))
    let cache = StreamingCache(
        store: store, origin: HTTPOrigin(), configuration: StreamingConfiguration(chunksPerRequest: 4))
    print("nginx on 127.0.0.1:\(server.port) serving \(url.lastPathComponent) (\(formatBytes(length)));")
    print("store with \(formatBytes(chunkSize)) chunks at \(store.directory.path)\n")

    let seekFrom = length / 4
    let seekTo = length * 3 / 5
    print(
        "Each play, as AVPlayer asks: bytes=0-1 with content info, bytes 0 to \(formatBytes(seekFrom)), a seek to \(formatBytes(seekTo)), then to the end.\n"
    )
    let widths = [22, 17, 16, 18, 14, 15]
    print(
        row(
            ["", "bytes from origin", "bytes from store", "time to first byte", "chunks fetched", "origin requests"],
            widths: widths))
    print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-"))

    for play in 1...2 {
        let before = cache.statistics
        let item = StreamingItem(url: url, cache: cache)
        let result = try await DemoPlayer(loader: item.loader).play(seekFrom: seekFrom, seekTo: seekTo)
        try await Task.sleep(for: .milliseconds(50))
        let delta = cache.statistics.since(before)
        let served = item.loader.statistics
        print(
            row(
                [
                    "play \(play) (\(result.information?.mimeType ?? "?"))", formatBytes(delta.originBytes),
                    formatBytes(served.bytesServedFromStore), formatDuration(result.firstByte),
                    "\(delta.chunksFetched)",
                    "\(delta.originRequests)",
                ], widths: widths))
    }

    let before = cache.statistics
    let item = StreamingItem(url: url, cache: cache)
    item.download()
    for await event in item.events {
        if case .finishedDownloading = event { break }
        if case .downloadFailed(let error) = event { throw error }
    }
    let delta = cache.statistics.since(before)
    print(
        row(
            [
                "download() fills gap", formatBytes(delta.originBytes), "-", "-", "\(delta.chunksFetched)",
                "\(delta.originRequests)",
            ], widths: widths))

    let ranges = try store.cachedRanges(forKey: url.absoluteString)
    let info = try store.info(forKey: url.absoluteString)
    print(
        "\nCached ranges: \(ranges.map { "\($0.lowerBound)..<\($0.upperBound)" }.joined(separator: ", ")); complete: \(info?.isComplete == true)"
    )
    if let digest = info?.contentDigest { print("Content digest (xxh128sum of the file): \(digest.hexString)") }
    print("nginx logged \(server.loggedRequests().count) requests in all.\n")

    let stats = try store.statistics()
    print(
        "Store: \(stats.entryCount) entries (\(stats.completeCount) complete), \(formatBytes(stats.logicalBytes)) logical,"
    )
    print(
        "       \(formatBytes(stats.storedBytes)) stored in \(stats.chunkCount) chunks, data.mdb uses \(formatBytes(stats.fileBytes)),"
    )
    print("       limit \(formatBytes(stats.sizeLimit)), \(stats.evictions) evictions.")
} catch {
    print("demo failed: \(error)")
    exit(1)
}
