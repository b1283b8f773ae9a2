import Foundation
import MediaStore
import MediaSupport

/// Orders the transfers of one cache: playback before preloads before
/// downloads, and at most a few connections per origin host.
///
/// - **Yielding, not sharing.** A transfer calls ``checkpoint(_:)``
///   between chunks; while a busy transfer of higher priority exists
///   anywhere, the call waits, so a lower-priority transfer pauses instead
///   of taking a share of the bandwidth, and goes on when the higher one is
///   done or idle.
/// - **Idle is not busy.** A transfer held back by its reader (a paused
///   player) marks itself idle with ``setIdle(_:for:)`` and then blocks
///   nothing: a paused player never holds a download back.
/// - **Connections per host.** ``admit(_:host:)`` waits while the host has
///   `connectionsPerHost` transfers, higher priorities first, in arrival
///   order within one. A transfer never waits for a connection held by a
///   lower priority: when the host is full, the lowest-priority transfer
///   on it is preempted (it ends its response at the next chunk boundary,
///   its next checkpoint throws ``FetchSchedulerError/preempted``), and the
///   newcomer starts meanwhile. Playback never waits for a connection at all.
public final class FetchScheduler: Sendable {
    private struct Active {
        var ticket: FetchTicket
        var idle = false
        var preempted = false
    }

    private struct Waiter {
        let id: UInt64
        var priority: FetchPriority
        let host: String
        let continuation: CheckedContinuation<FetchTicket, any Error>
    }

    private struct State {
        var nextID: UInt64 = 1
        var active: [UInt64: Active] = [:]
        var admissions: [Waiter] = []
        var checkpoints: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    /// Transfers to one host at once (playback may exceed it while a
    /// preempted transfer winds down).
    public let connectionsPerHost: Int
    private let state = Locked(State())
    /// Called by ``admit(_:)`` and ``checkpoint(_:)`` on the waiting task
    /// just before it may wait, when set (a seam for the package's tests).
    private let willWait: (@Sendable () -> Void)?

    public convenience init(connectionsPerHost: Int = 4) {
        self.init(connectionsPerHost: connectionsPerHost, willWait: nil)
    }

    /// - parameter willWait: called on a task of ``admit(_:)`` or
    ///   ``checkpoint(_:)`` just before it may wait.
    package init(connectionsPerHost: Int = 4, willWait: (@Sendable () -> Void)?) {
        precondition(connectionsPerHost > 0, "connectionsPerHost must be positive")
        self.connectionsPerHost = connectionsPerHost
        self.willWait = willWait
    }

    /// What is running and waiting, by priority.
    public struct Snapshot: Sendable, Equatable {
        public var busy: [FetchPriority: Int] = [:]
        public var idle: [FetchPriority: Int] = [:]
        public var paused: [FetchPriority: Int] = [:]
        public var waitingForConnection: [FetchPriority: Int] = [:]

        public init() {}
    }

    public var snapshot: Snapshot {
        state.withLock { state in
            var result = Snapshot()
            for entry in state.active.values {
                let priority = entry.ticket.priority
                if entry.idle {
                    result.idle[priority, default: 0] += 1
                } else if state.checkpoints[entry.ticket.id] != nil {
                    result.paused[priority, default: 0] += 1
                } else {
                    result.busy[priority, default: 0] += 1
                }
            }
            for waiter in state.admissions { result.waitingForConnection[waiter.priority, default: 0] += 1 }
            return result
        }
    }

    /// Waits for a connection to `host` and returns the transfer's ticket.
    /// Throws ``FetchSchedulerError/cancelled`` when the task is cancelled
    /// while it waits.
    public func admit(_ priority: FetchPriority, host: String) async throws(FetchSchedulerError) -> FetchTicket {
        let ticket = makeTicket(priority, host: host)
        try await admit(ticket)
        return ticket
    }

    /// A ticket not yet admitted: pass it to ``admit(_:)``. Having it
    /// before admission lets its priority change while it waits
    /// (``setPriority(_:for:)``).
    public func makeTicket(_ priority: FetchPriority, host: String) -> FetchTicket {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return FetchTicket(id: id, priority: priority, host: host)
    }

    /// Waits for a connection for `ticket` (from ``makeTicket(_:host:)``).
    /// Throws ``FetchSchedulerError/cancelled`` when the task is cancelled
    /// while it waits.
    public func admit(_ ticket: FetchTicket) async throws(FetchSchedulerError) {
        let (id, priority, host) = (ticket.id, ticket.priority, ticket.host)
        do {
            _ = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<FetchTicket, any Error>) in
                    willWait?()
                    // Cancelled before this (the handler found no waiter): do not
                    // enqueue. Cancelled after: the handler finds the waiter.
                    let resume = state.withLock { state -> [() -> Void]? in
                        if Task.isCancelled { return nil }
                        state.admissions.append(
                            Waiter(id: id, priority: priority, host: host, continuation: continuation))
                        return Self.settle(&state, limit: connectionsPerHost)
                    }
                    guard let resume else { return continuation.resume(throwing: FetchSchedulerError.cancelled) }
                    resume.forEach { $0() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> Waiter? in
                    guard let index = state.admissions.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.admissions.remove(at: index)
                }
                waiter?.continuation.resume(throwing: FetchSchedulerError.cancelled)
            }
        } catch let error as FetchSchedulerError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Between chunks: returns at once unless a busy transfer of higher
    /// priority exists, then waits until none does. Throws
    /// ``FetchSchedulerError/preempted`` when a playback transfer took this
    /// one's connection, ``FetchSchedulerError/cancelled`` when the task is
    /// cancelled while it waits.
    public func checkpoint(_ ticket: FetchTicket) async throws(FetchSchedulerError) {
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    willWait?()
                    let outcome = state.withLock { state -> Result<Void, FetchSchedulerError>? in
                        guard let entry = state.active[ticket.id] else { return .success(()) }
                        if entry.preempted { return .failure(.preempted) }
                        if !Self.outranked(entry.ticket, in: state) { return .success(()) }
                        // Cancelled before this (the handler found nothing to resume):
                        // do not wait. Cancelled after: the handler finds the continuation.
                        if Task.isCancelled { return .failure(.cancelled) }
                        state.checkpoints[ticket.id] = continuation
                        return nil
                    }
                    switch outcome {
                    case .success?: continuation.resume()
                    case .failure(let error)?: continuation.resume(throwing: error)
                    case nil: break
                    }
                }
            } onCancel: {
                let waiting = state.withLock { $0.checkpoints.removeValue(forKey: ticket.id) }
                waiting?.resume(throwing: FetchSchedulerError.cancelled)
            }
        } catch let error as FetchSchedulerError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Whether a busy transfer of higher priority exists (or a playback
    /// transfer took this one's connection): what a transfer asks in the
    /// middle of a response, to end it at the next chunk boundary rather
    /// than pause with the connection open.
    public func isOutranked(_ ticket: FetchTicket) -> Bool {
        state.withLock { state in
            guard let entry = state.active[ticket.id] else { return false }
            return entry.preempted || Self.outranked(entry.ticket, in: state)
        }
    }

    /// Changes the priority of a waiting or running transfer (a player
    /// joined a download, or left it).
    public func setPriority(_ priority: FetchPriority, for ticket: FetchTicket) {
        let resume = state.withLock { state -> [() -> Void] in
            if let index = state.admissions.firstIndex(where: { $0.id == ticket.id }) {
                guard state.admissions[index].priority != priority else { return [] }
                state.admissions[index].priority = priority
            } else if let entry = state.active[ticket.id] {
                guard entry.ticket.priority != priority else { return [] }
                state.active[ticket.id]!.ticket = FetchTicket(id: ticket.id, priority: priority, host: ticket.host)
            } else {
                return []
            }
            return Self.settle(&state, limit: connectionsPerHost)
        }
        resume.forEach { $0() }
    }

    /// Marks a transfer idle (held back by its reader: it blocks nothing)
    /// or busy again.
    public func setIdle(_ idle: Bool, for ticket: FetchTicket) {
        let resume = state.withLock { state -> [() -> Void] in
            guard state.active[ticket.id] != nil, state.active[ticket.id]!.idle != idle else { return [] }
            state.active[ticket.id]!.idle = idle
            return Self.settle(&state, limit: connectionsPerHost)
        }
        resume.forEach { $0() }
    }

    /// Ends a transfer: its connection goes to the next waiter, and what it
    /// outranked goes on.
    public func finish(_ ticket: FetchTicket) {
        let resume = state.withLock { state -> [() -> Void] in
            guard state.active.removeValue(forKey: ticket.id) != nil else { return [] }
            var resume = Self.settle(&state, limit: connectionsPerHost)
            if let waiting = state.checkpoints.removeValue(forKey: ticket.id) { resume.append { waiting.resume() } }
            return resume
        }
        resume.forEach { $0() }
    }

    private static func outranked(_ ticket: FetchTicket, in state: State) -> Bool {
        state.active.values.contains { $0.ticket.priority > ticket.priority && !$0.idle && !$0.preempted }
    }

    /// Admits what may start, preempts for playback, and releases
    /// checkpoints no longer outranked; returns the resumptions to run
    /// outside the lock.
    private static func settle(_ state: inout State, limit: Int) -> [() -> Void] {
        var resume: [() -> Void] = []
        // Admissions: higher priorities first, arrival order within one.
        let order = state.admissions.indices.sorted {
            let (a, b) = (state.admissions[$0], state.admissions[$1])
            return a.priority != b.priority ? a.priority > b.priority : $0 < $1
        }
        var admitted: Set<Int> = []
        var blockedHosts: Set<String> = []
        for index in order {
            let waiter = state.admissions[index]
            let onHost = state.active.values.filter { $0.ticket.host == waiter.host && !$0.preempted }
            if onHost.count < limit, !blockedHosts.contains(waiter.host) {
                admitted.insert(index)
            } else if let victim = onHost.filter({ $0.ticket.priority < waiter.priority }).min(by: {
                ($0.ticket.priority, $1.ticket.id) < ($1.ticket.priority, $0.ticket.id)
            }), waiter.priority == .playback || !blockedHosts.contains(waiter.host) {
                // A higher priority takes the connection of the lowest transfer on the host.
                state.active[victim.ticket.id]!.preempted = true
                if let waiting = state.checkpoints.removeValue(forKey: victim.ticket.id) {
                    resume.append { waiting.resume(throwing: FetchSchedulerError.preempted) }
                }
                admitted.insert(index)
            } else if waiter.priority == .playback {
                admitted.insert(index)  // playback never waits for a connection
            } else {
                blockedHosts.insert(waiter.host)  // keep arrival order behind it
                continue
            }
            let ticket = FetchTicket(id: waiter.id, priority: waiter.priority, host: waiter.host)
            state.active[waiter.id] = Active(ticket: ticket)
            resume.append { waiter.continuation.resume(returning: ticket) }
        }
        state.admissions = state.admissions.enumerated().filter { !admitted.contains($0.offset) }.map(\.element)
        // Checkpoints no longer outranked go on.
        for (id, continuation) in state.checkpoints {
            guard let entry = state.active[id], !outranked(entry.ticket, in: state) else { continue }
            state.checkpoints[id] = nil
            resume.append { continuation.resume() }
        }
        return resume
    }
}
