import Foundation

/// A download's ``DownloadConditions`` as a background session's network
/// settings (the properties of the same names of `URLSessionConfiguration`
/// and `URLRequest`).
///
/// - ``allowsCellularAccess`` and ``allowsExpensiveNetworkAccess``: the
///   conditions' ``DownloadConditions/allowsExpensiveNetwork`` (cellular is
///   expensive; `unmetered` allows neither).
/// - ``allowsConstrainedNetworkAccess``: ``DownloadConditions/allowsConstrainedNetwork`` (Low Data Mode).
/// - ``isDiscretionary``: ``DownloadConditions/isDiscretionary``, or a
///   download started while the app is in the background (the system
///   treats those as discretionary).
///
/// The other conditions (charging, Low Power Mode, free space) have no
/// session setting: the queue checks them before it starts a task.
public struct TransferNetworkPolicy: Sendable, Hashable {
    public var allowsCellularAccess: Bool
    public var allowsExpensiveNetworkAccess: Bool
    public var allowsConstrainedNetworkAccess: Bool
    public var isDiscretionary: Bool

    public init(conditions: DownloadConditions, startedInBackground: Bool = false) {
        allowsCellularAccess = conditions.allowsExpensiveNetwork
        allowsExpensiveNetworkAccess = conditions.allowsExpensiveNetwork
        allowsConstrainedNetworkAccess = conditions.allowsConstrainedNetwork
        isDiscretionary = conditions.isDiscretionary || startedInBackground
    }
}
