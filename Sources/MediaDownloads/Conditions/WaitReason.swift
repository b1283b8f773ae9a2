import MediaStreaming

/// Why a download waits instead of running.
public enum WaitReason: Sendable, Hashable, Codable, CustomStringConvertible {
    case noNetwork
    /// Only an expensive network is there, and the download does not allow it.
    case expensiveNetwork
    /// Only a constrained network is there, and the download does not allow it.
    case constrainedNetwork
    /// The download requires charging.
    case notCharging
    /// Low Power Mode is on, and the download does not allow it.
    case lowPowerMode
    /// The volume is below the free-space floor (after unpinned entries were evicted).
    case storageLow(freeBytes: Int64, floor: Int64)
    /// A discretionary download waits while playback or preloads run.
    case higherPriorityActive

    public var description: String {
        switch self {
        case .noNetwork: "no network"
        case .expensiveNetwork: "only an expensive network"
        case .constrainedNetwork: "only a constrained network"
        case .notCharging: "not charging"
        case .lowPowerMode: "Low Power Mode"
        case .storageLow(let free, let floor): "storage low (\(free) bytes free, floor \(floor))"
        case .higherPriorityActive: "discretionary: playback or preloads are running"
        }
    }
}
