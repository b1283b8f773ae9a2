/// An event the download's status does not take.
public struct DownloadTransitionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: DownloadStatus
    public var event: DownloadEvent

    public var description: String { "a \(status) download cannot take \(event)" }
}
