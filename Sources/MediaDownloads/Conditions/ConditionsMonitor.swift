import MediaStreaming

/// Supplies the device's state to the download queue: ``SettableConditionsMonitor``
/// anywhere (tests, or an app that knows better), ``SystemConditionsMonitor``
/// from the operating system.
public protocol ConditionsMonitor: Sendable {
    /// The state now.
    var current: DeviceConditions { get }
    /// The state now, then each change, until the stream is dropped.
    func updates() -> AsyncStream<DeviceConditions>
}
