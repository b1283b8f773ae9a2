import Foundation
import MediaSupport

/// The MIME types sniffed from the first bytes of complete store entries,
/// by cache key and entry version, for the replies read straight from the
/// store: an entry is sniffed once, not on every request (a version's
/// bytes never change). At most `capacity` are kept; when full, it starts
/// over.
final class SniffedTypes: Sendable {
    private struct Known {
        var version: UInt64
        /// The type the entry declared (generic, or it would not be sniffed).
        var declared: String?
        var sniffed: String
    }

    private let known = Locked<[String: Known]>([:])
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The type sniffed for version `version` of `key` declared as `declared`, if known.
    func type(forKey key: String, version: UInt64, declared: String?) -> String? {
        known.withLock { known in
            guard let entry = known[key], entry.version == version, entry.declared == declared else { return nil }
            return entry.sniffed
        }
    }

    /// Remembers `sniffed` for version `version` of `key` declared as `declared`.
    func remember(_ sniffed: String, forKey key: String, version: UInt64, declared: String?) {
        known.withLock { known in
            if known[key] == nil, known.count >= capacity { known.removeAll(keepingCapacity: true) }
            known[key] = Known(version: version, declared: declared, sniffed: sniffed)
        }
    }

    /// The entries kept.
    var count: Int { known.withLock { $0.count } }
}
