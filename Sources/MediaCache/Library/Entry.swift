import Foundation

/// An object read from a storage, with its expiry and location.
public struct Entry<T> {
    /// The cached object.
    public let object: T
    /// When it expires: ``Expiry/never`` or ``Expiry/date(_:)``.
    public let expiry: Expiry
    /// Where the entry lives on disk: the directory of the store that holds
    /// it (entries live inside one store, not in a file each). `nil` for an
    /// object served by the memory tier.
    public let filePath: String?

    /// Makes an entry.
    public init(object: T, expiry: Expiry, filePath: String? = nil) {
        self.object = object
        self.expiry = expiry
        self.filePath = filePath
    }
}

extension Entry: Sendable where T: Sendable {}
