import Foundation
import HLSPlaylist
import MediaHLS
import MediaStore

/// HLS assets as a version before store holds left them: every entry
/// pinned (the app's hold since the store's upgrade) and grouped by
/// `hls.keepers`, the assets that kept it.
enum LegacyHLSAssets {
    /// The write options of a legacy entry of `kind` that `keepers` kept.
    static func options(keepers: [String], kind: HLSResourceKind) -> WriteOptions {
        WriteOptions(
            expiry: .never,
            metadata: EntryMetadata(
                userInfo: [
                    HLSEntryMetadata.kind: kind.rawValue, HLSEntryMetadata.keepers: keepers.joined(separator: "\n"),
                ]),
            pinned: true)
    }

    /// Writes into `store` the master playlist of each of `masters` (kept
    /// by its own asset) and `segment`, kept by all of them. Returns the
    /// assets' keys (their masters' store keys, as `resources` makes them).
    static func write(
        masters: [URL], sharing segment: String, in store: MediaStore, resources: HLSResourceStore
    ) throws -> [String] {
        let assets = masters.map { resources.resourceKey(for: $0).storeKey }
        for asset in assets {
            try store.put(
                Data("#EXTM3U\n".utf8), forKey: asset, options: options(keepers: [asset], kind: .masterPlaylist))
        }
        try store.put(
            Data(repeating: 7, count: 1000), forKey: segment, options: options(keepers: assets, kind: .segment))
        return assets
    }
}
