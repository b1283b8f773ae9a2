import MediaStreaming

/// When a download may run (the role of `URLSessionConfiguration`'s
/// `allowsExpensiveNetworkAccess`, `allowsConstrainedNetworkAccess` and
/// `isDiscretionary`, and media3's `Requirements`).
public struct DownloadConditions: Sendable, Hashable, Codable {
    /// Run on an expensive network (cellular, a personal hotspot).
    public var allowsExpensiveNetwork: Bool
    /// Run on a constrained network (Low Data Mode).
    public var allowsConstrainedNetwork: Bool
    /// Run only while the device charges.
    public var requiresCharging: Bool
    /// Run in Low Power Mode.
    public var allowsLowPowerMode: Bool
    /// Run only while the store's volume has at least this many bytes free.
    public var minimumFreeBytes: Int64?
    /// Wait until nothing of higher priority (playback, preloads) is active.
    public var isDiscretionary: Bool

    public init(
        allowsExpensiveNetwork: Bool = true, allowsConstrainedNetwork: Bool = true, requiresCharging: Bool = false,
        allowsLowPowerMode: Bool = true, minimumFreeBytes: Int64? = nil, isDiscretionary: Bool = false
    ) {
        self.allowsExpensiveNetwork = allowsExpensiveNetwork
        self.allowsConstrainedNetwork = allowsConstrainedNetwork
        self.requiresCharging = requiresCharging
        self.allowsLowPowerMode = allowsLowPowerMode
        self.minimumFreeBytes = minimumFreeBytes
        self.isDiscretionary = isDiscretionary
    }

    /// Anything goes (the default).
    public static let any = DownloadConditions()
    /// Wi-Fi or wired only, not in Low Data Mode.
    public static let unmetered = DownloadConditions(allowsExpensiveNetwork: false, allowsConstrainedNetwork: false)

    /// Why a download with these conditions may not run now, first reason
    /// first; empty when it may.
    public func unmetReasons(in device: DeviceConditions, higherPriorityActive: Bool = false) -> [WaitReason] {
        var reasons: [WaitReason] = []
        if !device.isNetworkAvailable { reasons.append(.noNetwork) }
        if device.isNetworkAvailable, device.isExpensive, !allowsExpensiveNetwork { reasons.append(.expensiveNetwork) }
        if device.isNetworkAvailable, device.isConstrained, !allowsConstrainedNetwork {
            reasons.append(.constrainedNetwork)
        }
        if requiresCharging, device.isCharging != true { reasons.append(.notCharging) }
        if device.isLowPowerMode, !allowsLowPowerMode { reasons.append(.lowPowerMode) }
        if let floor = minimumFreeBytes, let free = device.freeBytes, free < floor {
            reasons.append(.storageLow(freeBytes: free, floor: floor))
        }
        if isDiscretionary, higherPriorityActive { reasons.append(.higherPriorityActive) }
        return reasons
    }
}
