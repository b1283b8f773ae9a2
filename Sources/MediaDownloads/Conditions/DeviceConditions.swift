import MediaStreaming

/// The device's state as far as downloads care, from a ``ConditionsMonitor``.
public struct DeviceConditions: Sendable, Hashable, Codable {
    /// Any usable network path.
    public var isNetworkAvailable: Bool
    /// The path is expensive (cellular, a hotspot).
    public var isExpensive: Bool
    /// The path is constrained (Low Data Mode).
    public var isConstrained: Bool
    /// Charging or full on external power; `nil` when unknown (no battery
    /// information: a desktop or a server counts as not charging only for
    /// downloads that require charging).
    public var isCharging: Bool?
    /// Low Power Mode is on.
    public var isLowPowerMode: Bool
    /// Bytes free for important data on the store's volume; `nil` when unknown.
    public var freeBytes: Int64?

    public init(
        isNetworkAvailable: Bool = true, isExpensive: Bool = false, isConstrained: Bool = false,
        isCharging: Bool? = nil,
        isLowPowerMode: Bool = false, freeBytes: Int64? = nil
    ) {
        self.isNetworkAvailable = isNetworkAvailable
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.isCharging = isCharging
        self.isLowPowerMode = isLowPowerMode
        self.freeBytes = freeBytes
    }
}
