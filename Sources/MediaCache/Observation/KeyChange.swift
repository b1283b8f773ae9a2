/// A change to one key, as seen by that key's observers.
public enum KeyChange<T> {
    /// The object was written; `before` is the previous object, if any
    /// (possibly expired).
    case edit(before: T?, after: T)
    /// The object was removed.
    case remove
}

extension KeyChange: Equatable where T: Equatable {}
extension KeyChange: Sendable where T: Sendable {}
