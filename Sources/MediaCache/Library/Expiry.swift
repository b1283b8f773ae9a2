import Foundation

/// When a cached object expires.
///
/// The same cases as hyperoslo/Cache. A storage resolves the expiry to an
/// absolute date at the moment of the write, so an ``Entry`` read back
/// carries either ``never`` or ``date(_:)``.
public enum Expiry: Sendable {
    /// The object never expires.
    ///
    /// ``date`` reports 2037-12-15 00:00:00 UTC, the constant hyperoslo/Cache
    /// uses; unlike upstream, the store itself keeps "never" as never, so
    /// objects do not start expiring on that date.
    case never
    /// The object expires this many seconds after it is written.
    case seconds(TimeInterval)
    /// The object expires at this moment.
    case date(Date)

    /// The date of expiry. For ``seconds(_:)`` it is computed from now on
    /// every access (as upstream), so use it only for values just written.
    public var date: Date {
        switch self {
        case .never: Date(timeIntervalSince1970: 60 * 60 * 24 * 365 * 68)
        case .seconds(let seconds): Date().addingTimeInterval(seconds)
        case .date(let date): date
        }
    }

    /// Whether the expiry date lies in the past.
    public var isExpired: Bool {
        date.timeIntervalSinceNow < 0
    }
}

extension Expiry {
    /// The absolute expiry this resolves to at write time; `nil` for never.
    @inlinable var absoluteDate: Date? {
        if case .never = self { return nil }
        return date
    }

    /// The expiry an entry stored with `absoluteDate` reports.
    @inlinable
    init(absoluteDate: Date?) {
        self = absoluteDate.map { .date($0) } ?? .never
    }
}
