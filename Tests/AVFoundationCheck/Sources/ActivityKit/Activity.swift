import Foundation

/// https://developer.apple.com/documentation/activitykit/activity
/// `class Activity<Attributes> where Attributes : ActivityAttributes`
/// (`final`: its `id` and `attributes` are `final let`). Declared
/// `Sendable` here, as the glue (main-actor isolated) awaits its `update`
/// and `end`: an assumption the documentation page does not state.
///
/// The stand-in's system side: every activity requested (of any
/// attributes type) is kept in one list, as the system keeps an app's;
/// ``standInReset()`` empties it. Each activity records what the glue did
/// to it (``standInCalls``) and what the documentation forbids
/// (``standInViolations``: content over 4 KB, an update or end of an ended
/// activity).
@available(iOS 16.1, *)
public final class Activity<Attributes>: Identifiable, @unchecked Sendable where Attributes: ActivityAttributes {
    /// https://developer.apple.com/documentation/activitykit/activity/contentstate-swift.typealias
    public typealias ContentState = Attributes.ContentState

    /// https://developer.apple.com/documentation/activitykit/activity/id
    public final let id: String
    /// https://developer.apple.com/documentation/activitykit/activity/attributes
    public final let attributes: Attributes

    private let lock = NSLock()
    private var storedContent: ActivityContent<ContentState>
    private var storedState = ActivityState.active
    private var calls: [StandInActivityCall<ContentState>] = []
    private var violations: [String] = []

    private init(attributes: Attributes, content: ActivityContent<ContentState>) {
        id = UUID().uuidString
        self.attributes = attributes
        storedContent = content
        calls = [.request(content.state)]
    }

    /// https://developer.apple.com/documentation/activitykit/activity/content
    /// `var content: ActivityContent<Activity<Attributes>.ContentState> { get }`.
    @available(iOS 16.2, *)
    public var content: ActivityContent<ContentState> { lock.withLock { storedContent } }

    /// https://developer.apple.com/documentation/activitykit/activity/activitystate-swift.property
    /// `var activityState: ActivityState { get }`.
    public var activityState: ActivityState { lock.withLock { storedState } }

    /// https://developer.apple.com/documentation/activitykit/activity/activities
    /// `static var activities: [Activity<Attributes>] { get }`: the app's
    /// activities of these attributes, including ended ones not yet dismissed.
    public static var activities: [Activity<Attributes>] {
        StandInActivityCenter.shared.all.compactMap { $0 as? Activity<Attributes> }
    }

    /// https://developer.apple.com/documentation/activitykit/activity/request(attributes:content:pushtype:)
    /// `static func request(attributes: Attributes, content: ActivityContent<Activity<Attributes>.ContentState>, pushType: PushType? = nil) throws -> Activity<Attributes>`.
    /// Throws ``ActivityAuthorizationError/denied`` while ``standInRefuse``
    /// is set, ``ActivityAuthorizationError/attributesTooLarge`` for
    /// content over 4 KB.
    @available(iOS 16.2, *)
    public static func request(
        attributes: Attributes, content: ActivityContent<ContentState>, pushType: PushType? = nil
    ) throws -> Activity<Attributes> {
        if StandInActivityCenter.shared.refuses { throw ActivityAuthorizationError.denied }
        if standInEncodedSize(content.state) > 4096 { throw ActivityAuthorizationError.attributesTooLarge }
        let activity = Activity(attributes: attributes, content: content)
        StandInActivityCenter.shared.add(activity)
        return activity
    }

    /// https://developer.apple.com/documentation/activitykit/activity/update(_:)
    /// `func update(_ content: ActivityContent<Activity<Attributes>.ContentState>) async`.
    @available(iOS 16.2, *)
    public func update(_ content: ActivityContent<ContentState>) async {
        let size = Self.standInEncodedSize(content.state)
        lock.withLock {
            calls.append(.update(content.state))
            if storedState == .ended || storedState == .dismissed { violations.append("update after its end") }
            if size > 4096 { violations.append("update of \(size) bytes, over 4 KB") }
            storedContent = content
        }
    }

    /// https://developer.apple.com/documentation/activitykit/activity/end(_:dismissalpolicy:)
    /// `func end(_ content: ActivityContent<Activity<Attributes>.ContentState>?, dismissalPolicy: ActivityUIDismissalPolicy = .default) async`.
    @available(iOS 16.2, *)
    public func end(_ content: ActivityContent<ContentState>?, dismissalPolicy: ActivityUIDismissalPolicy = .default)
        async
    {
        lock.withLock {
            calls.append(.end(content?.state, dismissalPolicy))
            if storedState == .ended || storedState == .dismissed { violations.append("end after its end") }
            if let content { storedContent = content }
            storedState = dismissalPolicy == .immediate ? .dismissed : .ended
        }
    }

    // MARK: The stand-in's own

    /// What the glue did to this activity, in order (its request first).
    @_spi(StandIn) public var standInCalls: [StandInActivityCall<ContentState>] { lock.withLock { calls } }
    /// What the documentation forbids that the glue did to it.
    @_spi(StandIn) public var standInViolations: [String] { lock.withLock { violations } }
    /// Forgets every activity (of every attributes type) and stops refusing.
    @_spi(StandIn) public static func standInReset() { StandInActivityCenter.shared.reset() }
    /// Whether `request` throws ``ActivityAuthorizationError/denied`` (Live Activities turned off).
    @_spi(StandIn) public static var standInRefuse: Bool {
        get { StandInActivityCenter.shared.refuses }
        set { StandInActivityCenter.shared.refuses = newValue }
    }

    private static func standInEncodedSize(_ state: ContentState) -> Int {
        (try? JSONEncoder().encode(state).count) ?? Int.max
    }
}

/// One call the glue made on an ``Activity``.
@_spi(StandIn) public enum StandInActivityCall<State: Hashable>: Hashable {
    case request(State)
    case update(State)
    case end(State?, ActivityUIDismissalPolicy)
}

/// The system's list of the app's activities.
final class StandInActivityCenter: @unchecked Sendable {
    static let shared = StandInActivityCenter()
    private let lock = NSLock()
    private var activities: [AnyObject] = []
    private var refusing = false

    var all: [AnyObject] { lock.withLock { activities } }

    var refuses: Bool {
        get { lock.withLock { refusing } }
        set { lock.withLock { refusing = newValue } }
    }

    func add(_ activity: AnyObject) { lock.withLock { activities.append(activity) } }

    func reset() {
        lock.withLock {
            activities = []
            refusing = false
        }
    }
}
