import Foundation

/// https://developer.apple.com/documentation/activitykit/activityattributes
/// `protocol ActivityAttributes : Decodable, Encodable`.
@available(iOS 16.1, *)
public protocol ActivityAttributes: Decodable, Encodable {
    /// https://developer.apple.com/documentation/activitykit/activityattributes/contentstate
    /// `associatedtype ContentState : Decodable, Encodable, Hashable` (its
    /// encoded form can't exceed 4 KB).
    associatedtype ContentState: Decodable, Encodable, Hashable
}

/// https://developer.apple.com/documentation/activitykit/activitycontent
/// `struct ActivityContent<State> where State : Decodable, State : Encodable, State : Hashable`
/// (the page lists `Sendable` among its conformances: here when its state is).
@available(iOS 16.2, *)
public struct ActivityContent<State> where State: Decodable, State: Encodable, State: Hashable {
    /// https://developer.apple.com/documentation/activitykit/activitycontent/state
    public var state: State
    /// https://developer.apple.com/documentation/activitykit/activitycontent/staledate
    public var staleDate: Date?
    /// https://developer.apple.com/documentation/activitykit/activitycontent/relevancescore
    public var relevanceScore: Double

    /// https://developer.apple.com/documentation/activitykit/activitycontent/init(state:staledate:relevancescore:)
    /// `init(state: State, staleDate: Date?, relevanceScore: Double = 0.0)`.
    public init(state: State, staleDate: Date?, relevanceScore: Double = 0.0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

@available(iOS 16.2, *)
extension ActivityContent: Sendable where State: Sendable {}

/// https://developer.apple.com/documentation/activitykit/activitystate
/// `enum ActivityState` (the cases the glue reads; `stale` from iOS 16.2).
@available(iOS 16.1, *)
public enum ActivityState: Sendable, Hashable {
    case active
    case dismissed
    case ended
    case stale
}

/// https://developer.apple.com/documentation/activitykit/activityuidismissalpolicy
/// `struct ActivityUIDismissalPolicy`: `default`, `immediate`, `after(_:)`.
@available(iOS 16.1, *)
public struct ActivityUIDismissalPolicy: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case `default`
        case immediate
        case after(Date)
    }

    let kind: Kind

    /// https://developer.apple.com/documentation/activitykit/activityuidismissalpolicy/default
    public static let `default` = ActivityUIDismissalPolicy(kind: .default)
    /// https://developer.apple.com/documentation/activitykit/activityuidismissalpolicy/immediate
    public static let immediate = ActivityUIDismissalPolicy(kind: .immediate)
    /// https://developer.apple.com/documentation/activitykit/activityuidismissalpolicy/after(_:)
    public static func after(_ date: Date) -> ActivityUIDismissalPolicy {
        ActivityUIDismissalPolicy(kind: .after(date))
    }
}

/// https://developer.apple.com/documentation/activitykit/pushtype
/// `struct PushType` (the glue passes `nil`: no push updates).
@available(iOS 16.1, *)
public struct PushType: Sendable, Hashable {
    /// https://developer.apple.com/documentation/activitykit/pushtype/token
    public static let token = PushType()
}

/// https://developer.apple.com/documentation/activitykit/activityauthorizationerror
/// `enum ActivityAuthorizationError : Error` (two of its cases: the ones the stand-in raises).
@available(iOS 16.1, *)
public enum ActivityAuthorizationError: Error, Sendable, Hashable {
    /// https://developer.apple.com/documentation/activitykit/activityauthorizationerror/denied
    case denied
    /// https://developer.apple.com/documentation/activitykit/activityauthorizationerror/attributestoolarge
    case attributesTooLarge
}
