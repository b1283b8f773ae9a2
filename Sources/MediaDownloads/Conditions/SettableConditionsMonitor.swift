import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// A ``ConditionsMonitor`` whose state is set by hand: for tests, and for
/// platforms or apps where the state comes from elsewhere.
public final class SettableConditionsMonitor: ConditionsMonitor {
    private struct State {
        var conditions: DeviceConditions
        var observers: [UUID: AsyncStream<DeviceConditions>.Continuation] = [:]
    }

    private let state: Locked<State>

    public init(_ conditions: DeviceConditions = DeviceConditions()) {
        state = Locked(State(conditions: conditions))
    }

    public var current: DeviceConditions { state.withLock { $0.conditions } }

    /// Sets the state; observers hear of it when it changed.
    public func set(_ conditions: DeviceConditions) {
        let observers = state.withLock { state -> [AsyncStream<DeviceConditions>.Continuation] in
            guard state.conditions != conditions else { return [] }
            state.conditions = conditions
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(conditions) }
    }

    /// Changes part of the state.
    public func update(_ change: (inout DeviceConditions) -> Void) {
        var conditions = current
        change(&conditions)
        set(conditions)
    }

    public func updates() -> AsyncStream<DeviceConditions> {
        let (stream, continuation) = AsyncStream<DeviceConditions>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        state.withLock { state in
            state.observers[id] = continuation
            continuation.yield(state.conditions)
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }
}
