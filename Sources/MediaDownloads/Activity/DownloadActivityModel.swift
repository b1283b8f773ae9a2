import Foundation

/// The downloads shown as one activity, the way `AVAssetDownloadTask`'s
/// Live Activity shows them: pure state, no I/O, no clock (each input
/// carries its time).
///
/// Input: each download's state (``Download``: id, title, discretionary
/// or not, ``DownloadStatus``, fraction done), one at a time
/// (``apply(_:at:)``) or as a snapshot of every download
/// (``apply(snapshot:at:)``), and fresh fractions of the members in flight
/// (``refresh(fractions:at:)``). Output: the ``DownloadActivityChange`` to
/// show, if any, and ``state``.
///
/// The rules:
/// - **Members.** A download joins the activity when it is resumed or
///   started — its status becomes queued, waiting or downloading — while it
///   is not discretionary. Members in flight are kept in the order they
///   joined (resume order); a failed or completed member that is resumed
///   again joins again, at the end. A download never counted is not
///   counted when it ends.
/// - **Discretionary downloads are not counted.** A member in flight that
///   becomes discretionary leaves; a discretionary download in flight that
///   becomes non-discretionary joins then (at the end).
/// - **Leaving.** A member in flight that is stopped, or missing from a
///   snapshot, leaves without an outcome; a removed member
///   (``DownloadStatus/removing``) leaves, with its outcome if it had one.
/// - **Start.** The activity starts (``DownloadActivityChange/start(_:)``,
///   ``DownloadActivityState/started`` = that input's time) when the first
///   member joins while none is running.
/// - **While running** (``DownloadActivityState/Phase/downloading``):
///   ``DownloadActivityState/fractionCompleted`` is the mean of the
///   fractions of the members in flight (queued, waiting or downloading;
///   each weighs the same, as the length of an HLS asset is not known
///   before its end); ``DownloadActivityState/title`` is the member's title
///   when exactly one is in flight, else `nil` and
///   ``DownloadActivityState/inFlight`` is the count to show.
/// - **End.** Once no member is in flight, the activity ends
///   (``DownloadActivityChange/end(_:)``) with its final state:
///   ``DownloadActivityState/Phase/failed`` when any member failed (not
///   counting cancellations), else ``DownloadActivityState/Phase/cancelled``
///   when any was cancelled, else ``DownloadActivityState/Phase/completed``
///   when any completed, else ``DownloadActivityState/Phase/idle`` (every
///   member left unfinished). Its fraction is then the share of members
///   that completed. The members are forgotten: the next join starts a new
///   activity.
/// - **Cancel-all.** ``cancelAllTargets`` names every member in flight
///   (what the activity shows), in resume order; each cancelled download
///   ends with ``DownloadError/cancelled`` (on Apple platforms
///   ``DownloadError/cocoaError``: `NSUserCancelledError` in
///   `NSCocoaErrorDomain`), and the activity ends with
///   ``DownloadActivityState/Phase/cancelled`` once the last of them is
///   reported so (unless another failed). Discretionary downloads are not
///   shown, so not cancelled.
///
/// Inputs are bounded: a fraction is clamped to 0...1 (not a number is 0),
/// a title cut at a character boundary to at most ``maxTitleBytes`` bytes
/// of UTF-8.
public struct DownloadActivityModel: Sendable {
    /// One download's state, as the model takes it.
    public struct Download: Sendable, Hashable {
        public var id: UUID
        /// What the activity shows for it (the asset's title).
        public var title: String
        /// Whether the download is discretionary (not shown, not counted).
        public var isDiscretionary: Bool
        public var status: DownloadStatus
        /// Done of the whole, 0...1.
        public var fraction: Double

        public init(id: UUID, title: String, isDiscretionary: Bool, status: DownloadStatus, fraction: Double) {
            self.id = id
            self.title = title
            self.isDiscretionary = isDiscretionary
            self.status = status
            self.fraction = fraction
        }

        /// `record` as the model takes it: discretionary from its
        /// conditions, fraction from its bytes (0 while its length is unknown).
        public init(_ record: DownloadRecord, title: String) {
            let fraction =
                if record.status == .completed { 1.0 } else if let total = record.totalBytes, total > 0 {
                    Double(record.bytesStored) / Double(total)
                } else { 0.0 }
            self.init(
                id: record.id, title: title, isDiscretionary: record.conditions.isDiscretionary,
                status: record.status, fraction: fraction)
        }
    }

    /// The longest title kept, in bytes of UTF-8. ActivityKit refuses
    /// content encoded over 4 KB; JSON writes a control character in 6
    /// bytes, so a title of this many stays under 3 KB encoded, leaving room
    /// for the rest of the state.
    public static let maxTitleBytes = 512

    private enum Outcome: Sendable, Hashable {
        case inFlight
        case completed
        case failed
        case cancelled
    }

    private struct Member: Sendable, Hashable {
        var id: UUID
        var title: String
        var fraction: Double
        var outcome: Outcome
    }

    /// The current activity's members, in resume order.
    private var members: [Member] = []
    /// When the current activity started; `nil` while none runs.
    private var started: Date?
    /// The running activity's state; `nil` while none runs (after its end too).
    public private(set) var state: DownloadActivityState?

    public init() {}

    /// The downloads a cancel-all cancels: every member in flight, in resume order.
    public var cancelAllTargets: [UUID] { members.filter { $0.outcome == .inFlight }.map(\.id) }

    /// Takes `download`'s new state at `now`; returns what to show, or
    /// `nil` when the activity shown does not change.
    public mutating func apply(_ download: Download, at now: Date) -> DownloadActivityChange? {
        fold(download)
        return settle(at: now)
    }

    /// Takes the state of every download at `now` (in queue order): each is
    /// applied in turn, and a member in flight missing from `snapshot`
    /// leaves. Returns the one change to show, or `nil`.
    public mutating func apply(snapshot: [Download], at now: Date) -> DownloadActivityChange? {
        let present = Set(snapshot.map(\.id))
        members.removeAll { !present.contains($0.id) && $0.outcome == .inFlight }
        for download in snapshot { fold(download) }
        return settle(at: now)
    }

    /// Takes fresh fractions (polled, say) of members in flight, by id;
    /// nothing else changes: not who is a member, nor any status. Returns
    /// the change to show, or `nil`.
    public mutating func refresh(fractions: [UUID: Double], at now: Date) -> DownloadActivityChange? {
        for index in members.indices where members[index].outcome == .inFlight {
            if let fraction = fractions[members[index].id] { members[index].fraction = Self.bounded(fraction) }
        }
        return settle(at: now)
    }

    /// Changes the members for `download` (the rules above), without settling.
    private mutating func fold(_ download: Download) {
        let index = members.firstIndex { $0.id == download.id }
        let inFlight = index.map { members[$0].outcome == .inFlight } ?? false
        switch download.status {
        case .queued, .waiting, .downloading:
            if download.isDiscretionary {
                if inFlight, let index { members.remove(at: index) }
            } else if inFlight, let index {
                members[index].title = Self.bounded(download.title)
                members[index].fraction = Self.bounded(download.fraction)
            } else {
                if let index { members.remove(at: index) }
                members.append(
                    Member(
                        id: download.id, title: Self.bounded(download.title),
                        fraction: Self.bounded(download.fraction), outcome: .inFlight))
            }
        case .completed:
            if inFlight, let index {
                members[index].outcome = .completed
                members[index].fraction = 1
            }
        case .failed(let error):
            if inFlight, let index { members[index].outcome = error.isCancellation ? .cancelled : .failed }
        case .stopped:
            if inFlight, let index { members.remove(at: index) }
        case .removing:
            if let index { members.remove(at: index) }
        }
    }

    /// Starts, updates or ends the activity for the members now.
    private mutating func settle(at now: Date) -> DownloadActivityChange? {
        let flying = members.filter { $0.outcome == .inFlight }
        guard let started = started ?? (flying.isEmpty ? nil : now) else {
            // No activity runs and nothing joined: ended members of no activity are forgotten.
            members.removeAll()
            return nil
        }
        let isStart = self.started == nil
        self.started = started
        let members = members
        func count(_ outcome: Outcome) -> Int { members.count { $0.outcome == outcome } }
        var next = DownloadActivityState(
            phase: .downloading, title: nil, inFlight: flying.count, fractionCompleted: 0,
            completed: count(.completed), failed: count(.failed), cancelled: count(.cancelled), started: started)
        if flying.isEmpty {
            next.phase =
                if next.failed > 0 { .failed } else if next.cancelled > 0 { .cancelled } else if next.completed > 0 {
                    .completed
                } else { .idle }
            next.fractionCompleted = members.isEmpty ? 0 : Double(next.completed) / Double(members.count)
            self.members.removeAll()
            self.started = nil
            state = nil
            return .end(next)
        }
        next.title = flying.count == 1 ? flying[0].title : nil
        next.fractionCompleted = flying.reduce(0) { $0 + $1.fraction } / Double(flying.count)
        if isStart {
            state = next
            return .start(next)
        }
        guard next != state else { return nil }
        state = next
        return .update(next)
    }

    private static func bounded(_ fraction: Double) -> Double { fraction.isNaN ? 0 : min(1, max(0, fraction)) }

    /// `title`'s longest prefix of whole characters within ``maxTitleBytes``
    /// (a character may be any number of scalars: not counted in characters).
    private static func bounded(_ title: String) -> String {
        var bytes = 0
        var end = title.startIndex
        for index in title.indices {
            bytes += title[index].utf8.count
            if bytes > maxTitleBytes { break }
            end = title.index(after: index)
        }
        return String(title[..<end])
    }
}

/// What the activity shows: the content state of the Live Activity.
public struct DownloadActivityState: Sendable, Hashable, Codable {
    public enum Phase: String, Sendable, Hashable, Codable {
        /// Members are in flight.
        case downloading
        /// Ended: every member that finished completed.
        case completed
        /// Ended: a member failed (not counting cancellations).
        case failed
        /// Ended: a member was cancelled, none failed.
        case cancelled
        /// Ended: every member left (stopped, removed, discretionary) unfinished.
        case idle
    }

    public var phase: Phase
    /// The title of the one member in flight; `nil` when there are more
    /// (or none).
    public var title: String?
    /// Members in flight (queued, waiting or downloading).
    public var inFlight: Int
    /// The mean done of the members in flight, 0...1; once ended, the
    /// share of members that completed.
    public var fractionCompleted: Double
    /// Members that completed, failed (not counting cancellations), were cancelled.
    public var completed: Int
    public var failed: Int
    public var cancelled: Int
    /// When the activity started.
    public var started: Date

    public init(
        phase: Phase, title: String?, inFlight: Int, fractionCompleted: Double, completed: Int, failed: Int,
        cancelled: Int, started: Date
    ) {
        self.phase = phase
        self.title = title
        self.inFlight = inFlight
        self.fractionCompleted = fractionCompleted
        self.completed = completed
        self.failed = failed
        self.cancelled = cancelled
        self.started = started
    }
}

/// What to do with the activity shown.
public enum DownloadActivityChange: Sendable, Hashable {
    /// Show it, with this state.
    case start(DownloadActivityState)
    case update(DownloadActivityState)
    /// End it, with this final state.
    case end(DownloadActivityState)

    /// The state it carries.
    public var state: DownloadActivityState {
        switch self {
        case .start(let state), .update(let state), .end(let state): state
        }
    }
}
