import Foundation

/// How the disk tier is placed and sized.
public struct DiskConfig: Sendable {
    /// The name of the store's folder inside ``directory``.
    public let name: String
    /// Expiry of objects written without one.
    public let expiry: Expiry
    /// Most bytes the store may hold (after compression and deduplication);
    /// `0` means no limit. Enforced on every write, least-recently-used first.
    public let maxSize: UInt
    /// The parent folder; the caches directory when `nil`.
    public let directory: URL?
    /// Data protection of the folder (Apple platforms).
    public let protectionType: FileProtectionType?
    /// Most entries the store may hold; `0` means no limit. (MediaCache addition.)
    public let countLimit: UInt
    /// zstd level for stored data, 1...19; `0` disables compression. (MediaCache addition.)
    public let compressionLevel: Int

    /// Makes a configuration. The first five parameters are hyperoslo/Cache's.
    public init(
        name: String,
        expiry: Expiry = .never,
        maxSize: UInt = 0,
        directory: URL? = nil,
        protectionType: FileProtectionType? = nil,
        countLimit: UInt = 0,
        compressionLevel: Int = 1
    ) {
        self.name = name
        self.expiry = expiry
        self.maxSize = maxSize
        self.directory = directory
        self.protectionType = protectionType
        self.countLimit = countLimit
        self.compressionLevel = compressionLevel
    }
}
