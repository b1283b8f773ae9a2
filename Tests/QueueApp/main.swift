import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming

// queue-app: the child process of the download queue's relaunch test.
//
//   queue-app <storeDir> <url>...
//       Opens the store (16 KiB chunks, as the tests' caches) and its
//       download queue (one download at a time), enqueues the URLs in
//       order, stops the second one at once, and prints one line per
//       change, `<index> <status> <bytesStored>`, flushed, until killed.
//       The parent kills it with SIGKILL mid-download and reopens the store.

let arguments = Array(CommandLine.arguments.dropFirst())
let urls = arguments.dropFirst().compactMap(URL.init(string:))
guard arguments.count >= 3, urls.count == arguments.count - 1 else {
    FileHandle.standardError.write(Data("usage: queue-app <storeDir> <url> <url>...\n".utf8))
    exit(64)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let store = try MediaStore(
        directory: URL(fileURLWithPath: arguments[0]),
        configuration: StoreConfiguration(chunkSize: 16 * 1024, initialMapSize: 64 << 20))
    let cache = StreamingCache(
        store: store, origin: HTTPOrigin(timeout: .seconds(10)),
        configuration: StreamingConfiguration(chunksPerRequest: 16, stallTimeout: .seconds(5)))
    let queue = try await DownloadQueue.open(
        cache: cache,
        configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 1, pollInterval: .milliseconds(20)))
    let updates = await queue.updates()
    var ids: [UUID] = []
    for (index, url) in urls.enumerated() {
        let record = try await queue.enqueue(url)
        ids.append(record.id)
        if index == 1 { try await queue.stop(record.id) }
    }
    say("ready")
    for await record in updates {
        guard let index = ids.firstIndex(of: record.id) else { continue }
        say("\(index) \(record.status) \(record.bytesStored)")
    }
} catch {
    say("failed \(error)")
    exit(2)
}
