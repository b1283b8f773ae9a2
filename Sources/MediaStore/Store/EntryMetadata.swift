import Foundation

/// Descriptive fields kept with an entry.
public struct EntryMetadata: Sendable, Equatable {
    /// The MIME type, e.g. `audio/mpeg`.
    public var mimeType: String?
    /// The origin's `ETag` validator.
    public var etag: String?
    /// The origin's `Last-Modified` validator, verbatim.
    public var lastModified: String?
    /// Free-form fields of the caller.
    public var userInfo: [String: String]

    public init(
        mimeType: String? = nil, etag: String? = nil, lastModified: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.mimeType = mimeType
        self.etag = etag
        self.lastModified = lastModified
        self.userInfo = userInfo
    }
}

/// When an entry expires.
public enum ExpiryPolicy: Sendable, Equatable {
    /// The store's ``StoreConfiguration/defaultLifetime``.
    case `default`
    /// Never.
    case never
    /// This many seconds after the write.
    case after(TimeInterval)
    /// At this moment.
    case at(Date)

    func resolve(now: Date, defaultLifetime: TimeInterval?) -> Date? {
        switch self {
        case .default: defaultLifetime.map { now.addingTimeInterval($0) }
        case .never: nil
        case .after(let seconds): now.addingTimeInterval(seconds)
        case .at(let date): date
        }
    }
}

/// Options for writing an entry.
public struct WriteOptions: Sendable, Equatable {
    public var expiry: ExpiryPolicy
    public var metadata: EntryMetadata
    /// A caller-defined cost, reported back; `0` by default (a negative one is stored as `0`).
    public var cost: Int
    /// Whether the new entry is held by ``MediaStore/appHolder`` (never
    /// evicted; see ``MediaStore/hold(_:by:version:)``).
    public var pinned: Bool

    public init(
        expiry: ExpiryPolicy = .default, metadata: EntryMetadata = EntryMetadata(), cost: Int = 0,
        pinned: Bool = false
    ) {
        self.expiry = expiry
        self.metadata = metadata
        self.cost = cost
        self.pinned = pinned
    }
}
