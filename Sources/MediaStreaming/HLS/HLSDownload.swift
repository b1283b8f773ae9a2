import Foundation
import HLSPlaylist
import MediaStore
import MediaSupport

/// One HLS asset (a variant and its media selections) downloaded for
/// offline playback by an ``HLSDownloader`` (the role of
/// `AVAssetDownloadTask` for HLS): progress as a `Foundation.Progress` (in
/// resources) and as an async sequence of ``HLSDownloadProgress`` (bytes,
/// segments, seconds of media); pause, resume, cancel.
///
/// Every resource it keeps is held in the store by its ``holder`` (never
/// evicted): the asset's (``HLSDownloader/holder(ofAsset:)``) until
/// ``HLSDownloader/release(_:)``, or a queue download's when a
/// ``DownloadQueue`` runs it. Resuming, or downloading again after a
/// relaunch, fetches only the resources missing from the store.
///
/// ``pause()``, ``resume()`` and ``cancel()`` may be called from any
/// thread, at once: each checks the state and changes it in one step, so
/// two calls never interleave (one acts on the other's outcome). What each
/// does in each state is in its documentation; in short, a cancelled
/// download stays cancelled, and a stopped run's late result is ignored.
public final class HLSDownload: Sendable {
    /// Where a download stands.
    public enum State: Sendable, Equatable {
        /// Reading the playlists and fetching.
        case downloading
        /// Paused; ``HLSDownload/resume()`` continues with what is missing.
        case paused
        /// Every resource of the selection is in the store, held.
        case completed
        /// Failed; ``HLSDownload/resume()`` retries (live and FairPlay
        /// assets fail at once, with nothing stored).
        case failed(HLSDownloadError)
        /// Cancelled; what was fetched stays in the store, held until released.
        case cancelled
    }

    /// The URL of the master playlist (or of a lone media playlist).
    public let url: URL
    /// The store key of the master playlist: what the asset's entries are grouped under.
    public let assetKey: String
    /// Progress in resources: `totalUnitCount` is the plan's resource count once known.
    public let progress: Progress
    /// The store holder that holds every resource it keeps.
    public let holder: String
    let resources: HLSResourceStore
    let variant: VariantChoice
    let audio: RenditionRequest
    let subtitles: RenditionRequest
    let headers: [String: String]
    let parallelFetches: Int
    /// The priority of its fetches in the cache's scheduler.
    let priority: FetchPriority
    /// The progress, with the number of the latest run started: a run's
    /// changes are applied only while its number is still the latest
    /// (checked and applied under this lock), so a stopped run that ends
    /// after ``resume()`` started the next one changes nothing; its result
    /// only while the download is downloading. ``pause()``, ``resume()``
    /// and ``cancel()`` check and change the state under it too.
    private let status: Locked<(progress: HLSDownloadProgress, run: Int)>
    private let planBox = Locked<HLSDownloadPlan?>(nil)
    /// Which URIs of its playlists may be fetched besides those on their own origin.
    let uriRule: PlaylistURIRule
    private let observers = Locked<[UUID: AsyncStream<HLSDownloadProgress>.Continuation]>([:])
    /// The task of the latest run started, with its number.
    private let task = Locked<(run: Int, task: Task<Void, Never>?)>((0, nil))
    /// Where a test holds its runs (none by default).
    let hooks: DownloadRunHooks

    init(
        url: URL, resources: HLSResourceStore, variant: VariantChoice, audio: RenditionRequest,
        subtitles: RenditionRequest, headers: [String: String], parallelFetches: Int,
        priority: FetchPriority = .download, uriRule: PlaylistURIRule = .publicHosts, holder: String? = nil,
        hooks: DownloadRunHooks = DownloadRunHooks()
    ) {
        self.hooks = hooks
        self.priority = priority
        self.uriRule = uriRule
        self.url = url
        self.assetKey = resources.resourceKey(for: url).storeKey
        self.holder = holder ?? HLSDownloader.holder(ofAsset: assetKey)
        self.resources = resources
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.headers = headers
        self.parallelFetches = max(1, parallelFetches)
        self.progress = Progress(totalUnitCount: 0)
        self.status = Locked((HLSDownloadProgress(state: .downloading), 0))
    }

    /// The current state.
    public var state: State { status.current.progress.state }

    /// The current snapshot.
    public var snapshot: HLSDownloadProgress { status.current.progress }

    /// The plan (every resource of the selection), once the playlists are read.
    public var plan: HLSDownloadPlan? { planBox.current }

    /// Snapshots from now on (the current one first), until the download
    /// completes, fails or is cancelled.
    public func progressUpdates() -> AsyncStream<HLSDownloadProgress> {
        let (stream, continuation) = AsyncStream<HLSDownloadProgress>.makeStream(
            bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in _ = self?.observers.withLock { $0.removeValue(forKey: id) } }
        // Read, told and registered under the observers' lock, as every
        // update is told (`publish()`): a change either came before (and is
        // read here) or is told after, so none is lost (an update that ends
        // the stream is seen here or sees this observer) and none is told
        // after a later one.
        let current = observers.withLock { observers -> HLSDownloadProgress in
            let current = status.current.progress
            continuation.yield(current)
            if !Self.endsUpdates(current.state) { observers[id] = continuation }
            return current
        }
        if Self.endsUpdates(current.state) { continuation.finish() }
        return stream
    }

    /// Waits until the download completes (returns), or fails or is cancelled (throws).
    public func completion() async throws(HLSDownloadError) {
        for await update in progressUpdates() {
            switch update.state {
            case .completed: return
            case .failed(let error): throw error
            case .cancelled: throw .streaming(.cancelled)
            default: continue
            }
        }
        switch state {
        case .failed(let error): throw error
        case .cancelled: throw .streaming(.cancelled)
        default: return
        }
    }

    /// Stops fetching; ``resume()`` continues with the missing resources only.
    ///
    /// Downloading: becomes ``State/paused``, and its run is stopped; a
    /// result that run still brings is ignored (what it stored stays).
    /// Paused, completed, failed or cancelled: does nothing.
    public func pause() {
        guard let paused = transition(to: .paused, from: { $0 == .downloading }) else { return }
        hooks.transition.current?()
        stopTask(upTo: paused.run)
        publish()
    }

    /// Continues a paused or failed download: a new run reads the
    /// playlists again and fetches the resources the store lacks.
    ///
    /// Paused or failed: becomes ``State/downloading``, with a new run.
    /// Downloading, completed or cancelled: does nothing (so two resumes
    /// start one run, and a cancelled download is never started again).
    public func resume() {
        start(onlyFromPausedOrFailed: true)
    }

    /// Stops for good; fetched resources stay in the store (held until
    /// ``HLSDownloader/release(_:)``).
    ///
    /// Downloading, paused or failed: becomes ``State/cancelled``, and its
    /// run (if going) is stopped; it stays cancelled (``resume()`` and
    /// ``pause()`` do nothing then). Completed or cancelled: does nothing.
    public func cancel() {
        guard let cancelled = transition(to: .cancelled, from: { !Self.isFinal($0) }) else { return }
        hooks.transition.current?()
        stopTask(upTo: cancelled.run)
        publish()
    }

    func start() {
        start(onlyFromPausedOrFailed: false)
    }

    /// Starts a run, numbered one more than the last; with
    /// `onlyFromPausedOrFailed`, only when paused or failed (checked and
    /// changed at once: two resumes start one run).
    private func start(onlyFromPausedOrFailed: Bool) {
        let begun = status.withLock { status -> (progress: HLSDownloadProgress, run: Int)? in
            if onlyFromPausedOrFailed {
                switch status.progress.state {
                case .paused, .failed: break
                default: return nil
                }
            }
            status.run += 1
            status.progress.state = .downloading
            return status
        }
        guard let begun else { return }
        let run = begun.run
        if onlyFromPausedOrFailed { hooks.transition.current?() }
        publish()
        let running = Task { [weak self] in
            guard let self else { return }
            do {
                try await self.run(run)
                let gate = self.hooks.result.current
                await gate?()
                self.update(run: run) { $0.state = .completed }
            } catch {
                let failure = HLSDownloadError.wrap(error)
                let gate = self.hooks.result.current
                await gate?()
                guard !failure.isCancellation else { return }
                self.update(run: run) { if $0.state == .downloading { $0.state = .failed(failure) } }
            }
        }
        task.withLock { slot in
            // A later run may have been stored first: this one is over.
            guard slot.run < run else { return running.cancel() }
            // An earlier run is over (it was stopped before this one began).
            slot.task?.cancel()
            slot = (run, running)
        }
        // Paused (or cancelled) before its task was stored: stopped then.
        let current = status.current
        if current.run != run || current.progress.state != .downloading { running.cancel() }
    }

    /// The task of the latest run, if not stopped; test support.
    package var latestRunTask: Task<Void, Never>? { task.current.task }

    // MARK: The download

    /// Run number `run`: its progress counts only while it is the latest.
    private func run(_ run: Int) async throws(HLSDownloadError) {
        let masterResource = HLSResource(
            kind: .masterPlaylist, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
        let (masterData, masterFetched) = try await playlistBytes(masterResource)
        var fetchedPlaylists: Set<HLSResourceKey> = masterFetched ? [masterResource.cacheKey] : []
        let parsed: Playlist
        do {
            parsed = try PlaylistParser.parse(masterData, url: url, limits: resources.limits.playlist)
        } catch {
            throw .playlist(url: url, error)
        }
        var playlists: [HLSResourceKey: Data] = [:]
        let plan: HLSDownloadPlan
        let policy = resources.cache.configuration.cacheKeyPolicy
        switch parsed {
        case .master(let master):
            playlists[masterResource.cacheKey] = masterData
            let selection: HLSSelection
            do {
                selection = try VariantSelector.select(
                    from: master, variant: variant, audio: audio, subtitles: subtitles)
            } catch {
                throw .selection(error)
            }
            var media: [MediaPlaylist] = []
            for playlistURL in selection.mediaPlaylistURLs {
                try checkURI(playlistURL, namedBy: url)
                let resource = HLSResource(
                    kind: .mediaPlaylist, url: playlistURL, cacheKey: resources.resourceKey(for: playlistURL),
                    playlistURL: playlistURL)
                let (data, fetched) = try await playlistBytes(resource)
                if fetched { fetchedPlaylists.insert(resource.cacheKey) }
                do {
                    guard
                        case .media(let playlist) = try PlaylistParser.parse(
                            data, url: playlistURL, limits: resources.limits.playlist)
                    else {
                        throw HLSDownloadError.unexpectedPlaylistKind(url: playlistURL)
                    }
                    media.append(playlist)
                } catch let error as PlaylistError {
                    throw .playlist(url: playlistURL, error)
                } catch {
                    throw .wrap(error)
                }
                playlists[resource.cacheKey] = data
            }
            do {
                plan = try HLSDownloadPlanner.plan(
                    master: master, selection: selection, mediaPlaylists: media, cacheKey: policy)
            } catch {
                throw .plan(error)
            }
        case .media(let media):
            // A lone media playlist is the whole asset.
            do {
                plan = try HLSDownloadPlanner.plan(media: media, cacheKey: policy)
            } catch {
                throw .plan(error)
            }
            let key = plan.resources(of: .mediaPlaylist)[0].cacheKey
            playlists[key] = masterData
            if masterFetched { fetchedPlaylists.insert(key) }
        }
        for resource in plan.resources where resource.kind != .masterPlaylist {
            // Media playlists and session keys are named by the master; the rest by their media playlist.
            try checkURI(resource.url, namedBy: resource.kind == .mediaPlaylist ? url : resource.playlistURL ?? url)
        }
        planBox.withLock { $0 = plan }
        let variantTrack = plan.tracks.first?.playlistURL
        update(run: run) {
            $0.totalResources = plan.resources.count
            $0.totalSegments = plan.resources.filter { $0.kind == .segment }.count
            $0.totalSeconds = plan.tracks.first?.duration ?? 0
            $0.bytes = 0
            $0.resources = 0
            $0.segments = 0
            $0.seconds = 0
            $0.fetchedResources = 0
        }
        // The playlists are known finished (the planner refused live ones):
        // keep them, the master last. A pinned master is served as its
        // downloaded selection (the media playlists pinned), so pinned
        // first, it was served for a moment with the variant's playlist
        // pinned and no audio rendition's yet: a player got a master with
        // no audio in it (`keepsTheMasterLast`).
        let kept = plan.resources.filter { playlists[$0.cacheKey] != nil }
        for resource in kept.filter({ $0.kind != .masterPlaylist }) + kept.filter({ $0.kind == .masterPlaylist }) {
            let data = playlists[resource.cacheKey]!
            try await keepPlaylist(resource, data: data, run: run)
            record(
                resource, run: run, bytes: data.count, fetched: fetchedPlaylists.contains(resource.cacheKey),
                variantTrack: variantTrack)
        }
        let rest = plan.resources.filter { playlists[$0.cacheKey] == nil }
        try await fetchAll(rest, run: run, policy: policy, variantTrack: variantTrack)
    }

    /// The bytes of a playlist: stored ones (a resumed or augmented
    /// download), else fetched without storing (a live one must not be kept).
    /// Throws ``HLSDownloadError/uriRefused(url:playlistURL:reason:)`` unless ``uriRule`` lets `uri` be fetched.
    private func checkURI(_ uri: URL, namedBy playlist: URL) throws(HLSDownloadError) {
        if let reason = uriRule.refusal(of: uri, in: playlist) {
            throw .uriRefused(url: uri, playlistURL: playlist, reason: reason)
        }
    }

    private func playlistBytes(_ resource: HLSResource) async throws(HLSDownloadError) -> (Data, Bool) {
        // A fetch of it the player started is joined. Kept (unpinned until
        // the plan is made) only if it can be downloaded: never a live one.
        let url = resource.url
        let limits = resources.limits.playlist
        return try await resources.data(
            for: resource,
            metadata: HLSEntryMetadata.metadata(
                for: resource, assetKey: nil, playlistKey: nil, mimeType: HLSContentType.playlist),
            headers: headers(for: url), priority: priority,
            store: { Self.isDownloadable($0, url: url, limits: limits) })
    }

    /// Whether `data` is a master playlist, or a media playlist the planner
    /// accepts, within `limits`.
    public static func isDownloadable(_ data: Data, url: URL, limits: PlaylistLimits = PlaylistLimits()) -> Bool {
        switch try? PlaylistParser.parse(data, url: url, limits: limits) {
        case .master: true
        case .media(let media): (try? HLSDownloadPlanner.plan(media: media)) != nil
        case nil: false
        }
    }

    /// Whether run `run` is still the latest and downloading (a cancelled one holds nothing more).
    private func isLive(_ run: Int) -> @Sendable () -> Bool {
        { [status] in
            let current = status.current
            return current.run == run && current.progress.state == .downloading
        }
    }

    private func keepPlaylist(_ resource: HLSResource, data: Data, run: Int) async throws(HLSDownloadError) {
        let metadata = HLSEntryMetadata.metadata(
            for: resource, assetKey: assetKey, playlistKey: nil, mimeType: HLSContentType.playlist)
        do {
            if try await resources.info(resource.cacheKey)?.isComplete == true {
                try await resources.keep(
                    resource.cacheKey.storeKey, metadata: metadata, holder: holder, pinWhile: isLive(run))
            } else {
                try await resources.write(
                    data, key: resource.cacheKey.storeKey, metadata: metadata, holder: holder, pinWhile: isLive(run))
            }
        } catch let error as StoreError {
            throw .streaming(.store(error))
        } catch {
            throw .wrap(error)
        }
    }

    /// Fetches (or finds in the store and holds) each of `list`, up to
    /// ``parallelFetches`` at once, in plan order.
    private func fetchAll(_ list: [HLSResource], run: Int, policy: CacheKeyPolicy, variantTrack: URL?)
        async throws(HLSDownloadError)
    {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func add() {
                    guard next < list.count else { return }
                    let resource = list[next]
                    next += 1
                    group.addTask { [self] in
                        try await self.obtain(resource, run: run, policy: policy, variantTrack: variantTrack)
                    }
                }
                for _ in 0..<parallelFetches { add() }
                while try await group.next() != nil { add() }
            }
        } catch {
            throw .wrap(error)
        }
    }

    /// The download's headers for a request to `url`: on the master's origin
    /// (scheme, host, port) all of them, elsewhere none (credentials never
    /// go to another origin a playlist names).
    private func headers(for url: URL) -> [String: String] {
        WebOrigin.same(url, self.url) ? headers : [:]
    }

    private func obtain(_ resource: HLSResource, run: Int, policy: CacheKeyPolicy, variantTrack: URL?)
        async throws(HLSDownloadError)
    {
        try Self.checkCancellation()
        let metadata = HLSEntryMetadata.metadata(
            for: resource, assetKey: assetKey, playlistKey: resource.playlistURL.map { policy.key(for: $0) },
            mimeType: HLSContentType.mimeType(for: resource.url, kind: resource.kind, mediaType: resource.mediaType))
        let (outcome, fetched) = try await resources.obtain(
            resource, metadata: metadata, holder: holder, headers: headers(for: resource.url), priority: priority,
            store: { _ in true }, pinWhile: isLive(run))
        if !fetched {
            // Found in the store, or fetched by a player meanwhile: keep it too.
            do {
                try await resources.keep(
                    resource.cacheKey.storeKey, metadata: metadata, holder: holder, pinWhile: isLive(run))
            } catch {
                throw .streaming(.store(error))
            }
        }
        record(resource, run: run, bytes: outcome.count, fetched: fetched, variantTrack: variantTrack)
    }

    private static func checkCancellation() throws(HLSDownloadError) {
        if Task.isCancelled { throw .streaming(.cancelled) }
    }

    private func record(_ resource: HLSResource, run: Int, bytes: Int, fetched: Bool, variantTrack: URL?) {
        update(run: run) {
            $0.bytes += bytes
            $0.resources += 1
            if fetched { $0.fetchedResources += 1 }
            if resource.kind == .segment {
                $0.segments += 1
                if resource.playlistURL == variantTrack { $0.seconds += resource.duration }
            }
        }
    }

    // MARK: State

    /// Changes the state to `next` if `allowed` accepts the current one
    /// (checked and changed at once): the new progress and run, or `nil`
    /// when refused.
    private func transition(to next: State, from allowed: (State) -> Bool)
        -> (progress: HLSDownloadProgress, run: Int)?
    {
        status.withLock { status -> (progress: HLSDownloadProgress, run: Int)? in
            guard allowed(status.progress.state) else { return nil }
            status.progress.state = next
            return status
        }
    }

    /// Cancels the task of run `run` or of an earlier one: never a later
    /// run's (a resume may have started one since `run` was stopped).
    private func stopTask(upTo run: Int) {
        task.withLock { slot in
            guard slot.run <= run else { return }
            slot.task?.cancel()
            slot.task = nil
        }
    }

    private static func isFinal(_ state: State) -> Bool {
        switch state {
        case .completed, .cancelled: true
        default: false
        }
    }

    /// Whether updates stop at `state` (a failed download may be resumed,
    /// but its observers have their answer).
    private static func endsUpdates(_ state: State) -> Bool {
        switch state {
        case .completed, .cancelled, .failed: true
        default: false
        }
    }

    /// Applies a change and tells observers; with `run`, only while that
    /// run is the latest (checked and changed at once).
    private func update(run: Int? = nil, _ change: (inout HLSDownloadProgress) -> Void) {
        let changed = status.withLock { status -> Bool in
            if let run, status.run != run { return false }
            let before = status.progress.state
            change(&status.progress)
            // A paused or cancelled download's late counts do not revive it.
            if before != .downloading, status.progress.state == .completed { status.progress.state = before }
            return true
        }
        if changed { publish() }
    }

    /// Tells the observers and `Progress` the progress as it is now (not
    /// as the caller's change left it: a later change may have been told
    /// already). Observers are told under their lock, so what they hear
    /// never goes back to an older state or count (a late call may tell
    /// the same snapshot twice).
    private func publish() {
        let (current, ended) = observers.withLock {
            observers -> (HLSDownloadProgress, [AsyncStream<HLSDownloadProgress>.Continuation]) in
            let current = status.current.progress
            for continuation in observers.values { continuation.yield(current) }
            guard Self.endsUpdates(current.state) else { return (current, []) }
            defer { observers = [:] }
            return (current, Array(observers.values))
        }
        // Outside the lock: a stream's termination handler takes it.
        for continuation in ended { continuation.finish() }
        progress.totalUnitCount = Int64(current.totalResources)
        progress.completedUnitCount = Int64(current.resources)
    }
}
