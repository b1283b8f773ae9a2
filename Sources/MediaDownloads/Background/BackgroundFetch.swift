import Foundation

/// What a run of a performer that fetches many resources (an HLS asset)
/// is given to fetch them as ``BackgroundTransfer`` tasks: the queue's
/// ``DownloadQueueConfiguration/backgroundTransfer`` and how imports are
/// retried and told (``DownloadContext/background``). A progressive
/// download has ``BackgroundTransferPerformer`` instead.
package struct BackgroundFetch: Sendable {
    package let transfer: any BackgroundTransfer
    /// Imports of one resource tried in a run before it fails.
    package let importAttempts: Int
    /// Told of each import that failed (the resource is fetched again).
    package let importFailed: @Sendable (DownloadRecord, TransferImportError) -> Void

    package init(
        transfer: any BackgroundTransfer, importAttempts: Int = 3,
        importFailed: @escaping @Sendable (DownloadRecord, TransferImportError) -> Void
    ) {
        self.transfer = transfer
        self.importAttempts = max(1, importAttempts)
        self.importFailed = importFailed
    }

    /// The task of `download` for the resource stored under `key`:
    /// ``TransferIdentifier`` with, for offset, a hash of the key (FNV-1a,
    /// 63 bits), the same at every launch. A task's end is matched to its
    /// resource by it, so two resources of one download whose keys hash
    /// alike must not both be fetched so (see ``collisions(_:)``).
    package static func identifier(download: UUID, key: String) -> TransferIdentifier {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return TransferIdentifier(download: download, offset: Int(hash & UInt64(Int.max)))
    }

    /// The keys of `keys` (in order) whose identifier an earlier key of
    /// them has already: fetch those in the foreground.
    package static func collisions(_ keys: [String], download: UUID) -> Set<String> {
        var seen: [Int: String] = [:]
        var colliding: Set<String> = []
        for key in keys {
            let offset = identifier(download: download, key: key).offset
            if let first = seen[offset] {
                if first != key { colliding.insert(key) }
            } else {
                seen[offset] = key
            }
        }
        return colliding
    }
}
