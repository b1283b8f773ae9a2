import Foundation
import MediaStore

/// The Swift blocks of MediaStore.docc/GettingStarted.md, compiled as
/// shown (`Tools/check-docs` fails when a block is not one of these
/// regions). Compiled only: the values they name come from the caller.
struct MediaStoreDocSnippets {
    func log(_ recovery: StoreRecovery) { print(recovery) }

    func gettingStarted(
        cachesURL: URL, trackData: Data, url: URL, key: String, contentLength: Int, middle: Data
    ) throws {
        // snippet: store-open (Sources/MediaStore/MediaStore.docc/GettingStarted.md)
        let store = try MediaStore(
            directory: cachesURL.appendingPathComponent("media"),
            configuration: StoreConfiguration(sizeLimit: 2 << 30, defaultLifetime: 30 * 86_400))
        if let recovery = store.recovery { log(recovery) }  // it was damaged and started empty
        // end snippet
        // snippet: store-values (Sources/MediaStore/MediaStore.docc/GettingStarted.md)
        try store.put(
            trackData, forKey: url.absoluteString,
            options: WriteOptions(metadata: EntryMetadata(mimeType: "audio/mpeg")))
        let bytes = try store.data(forKey: url.absoluteString)  // nil when absent, expired or partial
        // end snippet
        // snippet: store-sparse (Sources/MediaStore/MediaStore.docc/GettingStarted.md)
        let entry = try store.prepareEntry(forKey: key, length: contentLength)
        try store.write(middle, at: 40 * store.configuration.chunkSize, forKey: key, version: entry.version)
        let cached = try store.cachedRanges(forKey: key)
        let slice = try store.read(forKey: key, range: cached[0])
        // end snippet
        // snippet: store-upkeep (Sources/MediaStore/MediaStore.docc/GettingStarted.md)
        try store.hold(key, by: "queue/42", version: entry.version)  // kept while anyone holds it
        try store.release(key, by: "queue/42")  // each holder releases its own
        try store.setPinned(true, forKey: key)  // the "app" holder
        try store.removeExpired()
        let stats = try store.statistics()
        let report = try store.verify()  // every checksum, digest and reference count
        store.close()
        // end snippet
        _ = (bytes, slice, stats, report)
    }

    func holders(store: MediaStore, key: String) throws {
        // snippet: store-holders (Sources/MediaStore/MediaStore.docc/GettingStarted.md)
        let watch = store.addRemovalObserver { removals in print(removals) }
        let owners = try store.holders(of: key)  // ["app", "queue/42"]
        let lease = store.lease(forKey: key)  // not evicted while a player fills it
        // end snippet
        _ = (watch, owners, lease)
    }
}
