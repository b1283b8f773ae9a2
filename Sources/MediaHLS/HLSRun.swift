import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming

/// One run of an ``HLSDownloadPerformer``: the playlists read, the plan
/// made, every resource of it kept in the store and held by the run's
/// holder while the run counts (`DownloadContext/isLive`), progress
/// reported to its context.
struct HLSRun: Sendable {
    let url: URL
    let headers: [String: String]
    let priority: FetchPriority
    let performer: HLSDownloadPerformer
    let resources: HLSResourceStore
    let context: DownloadContext
    /// The store key of the master playlist: what the asset's entries are grouped under.
    let assetKey: String
    /// Where resources are fetched as background tasks (a queue's
    /// `DownloadQueueConfiguration/backgroundTransfer`); `nil`: in the foreground.
    let background: HLSBackgroundFetcher?

    init(
        record: DownloadRecord, performer: HLSDownloadPerformer, resources: HLSResourceStore,
        context: DownloadContext, background: HLSBackgroundFetcher? = nil
    ) {
        self.background = background
        self.url = record.url
        self.headers = record.headers
        self.priority = record.priority
        self.performer = performer
        self.resources = resources
        self.context = context
        self.assetKey = resources.resourceKey(for: record.url).storeKey
    }

    /// Reads the playlists, makes the plan, keeps the playlists (the
    /// master last) and fetches or holds every other resource. Returns
    /// the plan: what the run kept.
    func perform() async throws(DownloadError) -> HLSDownloadPlan {
        let masterResource = HLSResource(
            kind: .masterPlaylist, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
        let (masterData, masterFetched) = try await playlistBytes(masterResource)
        var fetchedPlaylists: Set<HLSResourceKey> = masterFetched ? [masterResource.cacheKey] : []
        let parsed: Playlist
        do {
            parsed = try PlaylistParser.parse(masterData, url: url, limits: resources.limits.playlist)
        } catch {
            throw .playlist(url: url, reason: String(describing: error))
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
                    from: master, variant: performer.variant, audio: performer.audio, subtitles: performer.subtitles)
            } catch {
                throw HLSDownloadPerformer.failure(error)
            }
            var media: [MediaPlaylist] = []
            for playlistURL in selection.mediaPlaylistURLs {
                try checkURI(playlistURL, namedBy: url)
                let resource = HLSResource(
                    kind: .mediaPlaylist, url: playlistURL, cacheKey: resources.resourceKey(for: playlistURL),
                    playlistURL: playlistURL)
                let (data, fetched) = try await playlistBytes(resource)
                if fetched { fetchedPlaylists.insert(resource.cacheKey) }
                let parsedMedia: Playlist
                do {
                    parsedMedia = try PlaylistParser.parse(data, url: playlistURL, limits: resources.limits.playlist)
                } catch {
                    throw .playlist(url: playlistURL, reason: String(describing: error))
                }
                guard case .media(let playlist) = parsedMedia else {
                    throw .playlist(url: playlistURL, reason: "a master playlist where a media playlist was expected")
                }
                media.append(playlist)
                playlists[resource.cacheKey] = data
            }
            do {
                plan = try HLSDownloadPlanner.plan(
                    master: master, selection: selection, mediaPlaylists: media, cacheKey: policy)
            } catch {
                throw HLSDownloadPerformer.failure(error)
            }
        case .media(let media):
            // A lone media playlist is the whole asset.
            do {
                plan = try HLSDownloadPlanner.plan(media: media, cacheKey: policy)
            } catch {
                throw HLSDownloadPerformer.failure(error)
            }
            let key = plan.resources(of: .mediaPlaylist)[0].cacheKey
            playlists[key] = masterData
            if masterFetched { fetchedPlaylists.insert(key) }
        }
        for resource in plan.resources where resource.kind != .masterPlaylist {
            // Media playlists and session keys are named by the master; the rest by their media playlist.
            try checkURI(resource.url, namedBy: resource.kind == .mediaPlaylist ? url : resource.playlistURL ?? url)
        }
        context.describe(plan)
        let variantTrack = plan.tracks.first?.playlistURL
        context.report {
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
        // kept, the master last. A held master is served as its downloaded
        // selection, so it goes once every media playlist it names is held.
        let kept = plan.resources.filter { playlists[$0.cacheKey] != nil }
        for resource in kept.filter({ $0.kind != .masterPlaylist }) + kept.filter({ $0.kind == .masterPlaylist }) {
            let data = playlists[resource.cacheKey]!
            try await keepPlaylist(resource, data: data)
            record(
                resource, bytes: data.count, fetched: fetchedPlaylists.contains(resource.cacheKey),
                variantTrack: variantTrack)
        }
        let rest = plan.resources.filter { playlists[$0.cacheKey] == nil }
        var foreground: Set<String> = []
        if let background {
            // Tasks and deliveries of resources no longer in the plan go; two
            // resources whose tasks would be named alike: the later ones in the foreground.
            let keys = plan.resources.map(\.cacheKey.storeKey)
            await background.dropStrays(keeping: Set(keys.map(background.identifier(of:))))
            foreground = BackgroundFetch.collisions(rest.map(\.cacheKey.storeKey), download: background.record.id)
        }
        try await fetchAll(rest, policy: policy, variantTrack: variantTrack, foreground: foreground)
        return plan
    }

    /// Throws `DownloadError/uriRefused(url:playlistURL:reason:)` unless
    /// the performer's `PlaylistURIRule` lets `uri` be fetched.
    private func checkURI(_ uri: URL, namedBy playlist: URL) throws(DownloadError) {
        if let reason = performer.uriRule.refusal(of: uri, in: playlist) {
            throw .uriRefused(url: uri, playlistURL: playlist, reason: reason)
        }
    }

    /// The bytes of a playlist: stored ones (a resumed or augmented
    /// download), else fetched; kept (not held until the plan is made)
    /// only if it can be downloaded: never a live one. A fetch of it a
    /// player started is joined.
    private func playlistBytes(_ resource: HLSResource) async throws(DownloadError) -> (Data, Bool) {
        let url = resource.url
        let limits = resources.limits.playlist
        if let background { return try await backgroundPlaylistBytes(resource, through: background) }
        do {
            return try await resources.data(
                for: resource,
                metadata: HLSEntryMetadata.metadata(
                    for: resource, assetKey: nil, playlistKey: nil, mimeType: HLSContentType.playlist),
                headers: headers(for: url), priority: priority,
                store: { HLSDownloader.isDownloadable($0, url: url, limits: limits) })
        } catch {
            throw error.downloadError
        }
    }

    /// ``playlistBytes(_:)`` through a background task: stored ones, else
    /// its task's file (then stored, not held, if it can be downloaded).
    private func backgroundPlaylistBytes(_ resource: HLSResource, through background: HLSBackgroundFetcher)
        async throws(DownloadError) -> (Data, Bool)
    {
        let key = resource.cacheKey.storeKey
        do {
            if let stored = try await resources.stored(resource.cacheKey) {
                await background.found(key)
                return (stored, false)
            }
        } catch {
            throw HLSResourceError.streaming(error).downloadError
        }
        let request = background.request(for: resource, headers: headers(for: resource.url))
        let data = try await background.obtain(request) { file, response throws(HLSImportFailure) in
            try resources.importPlaylist(file, request: request, response: response, resource: resource)
        }
        if HLSDownloader.isDownloadable(data, url: resource.url, limits: resources.limits.playlist) {
            let metadata = HLSEntryMetadata.metadata(
                for: resource, assetKey: nil, playlistKey: nil, mimeType: HLSContentType.playlist)
            do {
                try await resources.write(data, key: key, metadata: metadata, holder: nil)
            } catch {
                throw .store(error)
            }
        }
        return (data, true)
    }

    private func keepPlaylist(_ resource: HLSResource, data: Data) async throws(DownloadError) {
        let metadata = HLSEntryMetadata.metadata(
            for: resource, assetKey: assetKey, playlistKey: nil, mimeType: HLSContentType.playlist)
        do {
            if try await resources.info(resource.cacheKey)?.isComplete == true {
                try await resources.keep(
                    resource.cacheKey.storeKey, metadata: metadata, holder: context.holder, pinWhile: context.isLive)
            } else {
                try await resources.write(
                    data, key: resource.cacheKey.storeKey, metadata: metadata, holder: context.holder,
                    pinWhile: context.isLive)
            }
        } catch {
            throw .wrap(error)
        }
    }

    /// Fetches (or finds in the store and holds) each of `list`, up to
    /// the performer's `parallelFetches` at once (`backgroundTasks` through
    /// background tasks), in plan order; those of `foreground` (store keys)
    /// never through background tasks. A resource whose body is in gives
    /// its fetch's place to the next one while it is published, so up to
    /// as many again wait for the store's commit at once, and share it (the
    /// store's group commit).
    private func fetchAll(
        _ list: [HLSResource], policy: CacheKeyPolicy, variantTrack: URL?, foreground: Set<String>
    ) async throws(DownloadError) {
        // Background tasks: at most the performer's `backgroundTasks` scheduled at once.
        let parallel = background == nil ? performer.parallelFetches : max(1, performer.backgroundTasks)
        let permits = FetchPermits(parallel)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func add() {
                    guard next < list.count else { return }
                    let resource = list[next]
                    next += 1
                    group.addTask { [self] in
                        await permits.acquire()
                        let permit = FetchPermit(permits)
                        defer { permit.release() }
                        try await self.obtain(
                            resource, policy: policy, variantTrack: variantTrack,
                            foreground: foreground.contains(resource.cacheKey.storeKey), permit: permit)
                    }
                }
                for _ in 0..<2 * parallel { add() }
                while try await group.next() != nil { add() }
            }
        } catch {
            throw HLSDownloadPerformer.failure(error)
        }
    }

    /// The download's headers for a request to `url`: on the master's origin
    /// (scheme, host, port) all of them, elsewhere none (credentials never
    /// go to another origin a playlist names).
    private func headers(for url: URL) -> [String: String] {
        WebOrigin.same(url, self.url) ? headers : [:]
    }

    /// Fetches (or finds in the store and holds) `resource`, and counts it;
    /// `permit` (its place among the run's fetches) is given back once its
    /// body is in or it needs no fetch.
    private func obtain(
        _ resource: HLSResource, policy: CacheKeyPolicy, variantTrack: URL?, foreground: Bool, permit: FetchPermit
    )
        async throws(DownloadError)
    {
        if Task.isCancelled { throw .cancelled }
        let metadata = HLSEntryMetadata.metadata(
            for: resource, assetKey: assetKey, playlistKey: resource.playlistURL.map { policy.key(for: $0) },
            mimeType: HLSContentType.mimeType(for: resource.url, kind: resource.kind, mediaType: resource.mediaType))
        let obtained: (outcome: HLSResourceStore.Outcome, fetched: Bool)
        if let background, !foreground {
            obtained = try await backgroundObtain(resource, metadata: metadata, through: background)
        } else {
            obtained = try await foregroundObtain(resource, metadata: metadata, permit: permit)
        }
        permit.release()
        let (outcome, fetched) = obtained
        if !fetched {
            // Found in the store, or fetched by a player meanwhile: keep it too.
            do {
                try await resources.keep(
                    resource.cacheKey.storeKey, metadata: metadata, holder: context.holder, pinWhile: context.isLive)
            } catch {
                throw .store(error)
            }
        }
        record(resource, bytes: outcome.count, fetched: fetched, variantTrack: variantTrack)
    }

    /// `resource` from the store, or through a background task whose file
    /// is imported (held by the download's holder while the run counts).
    private func backgroundObtain(
        _ resource: HLSResource, metadata: EntryMetadata, through background: HLSBackgroundFetcher
    ) async throws(DownloadError) -> (outcome: HLSResourceStore.Outcome, fetched: Bool) {
        let key = resource.cacheKey.storeKey
        do {
            if let info = try await resources.info(resource.cacheKey), info.isComplete {
                await background.found(key)
                return (.body(.stored(info)), false)
            }
        } catch {
            throw HLSResourceError.streaming(error).downloadError
        }
        let request = background.request(for: resource, headers: headers(for: resource.url))
        let (resources, holder, live) = (resources, context.holder, context.isLive)
        let imported = try await background.obtain(request) { file, response throws(HLSImportFailure) in
            try await resources.importResource(
                file, request: request, response: response, resource: resource, metadata: metadata,
                holder: holder, pinWhile: live)
        }
        guard let imported else {
            // Stored meanwhile (a player fetched it): kept as found.
            let info: EntryInfo?
            do {
                info = try await resources.info(resource.cacheKey)
            } catch {
                throw HLSResourceError.streaming(error).downloadError
            }
            guard let info else { throw .transfer("\(key): stored by another fetch, then gone") }
            return (.body(.stored(info)), false)
        }
        return (imported, true)
    }

    /// `resource` from the store or the origin, through the resource store
    /// (a fetch of it a player started is joined); `permit` is given back
    /// once its body is in.
    private func foregroundObtain(_ resource: HLSResource, metadata: EntryMetadata, permit: FetchPermit)
        async throws(DownloadError) -> (outcome: HLSResourceStore.Outcome, fetched: Bool)
    {
        let obtained: (outcome: HLSResourceStore.Outcome, fetched: Bool)
        do {
            obtained = try await resources.obtain(
                resource, metadata: metadata, holder: context.holder, headers: headers(for: resource.url),
                priority: priority, store: { _ in true }, pinWhile: context.isLive, fetched: { permit.release() })
        } catch {
            throw error.downloadError
        }
        return obtained
    }

    private func record(_ resource: HLSResource, bytes: Int, fetched: Bool, variantTrack: URL?) {
        context.report {
            $0.bytes += bytes
            $0.resources += 1
            if fetched { $0.fetchedResources += 1 }
            if resource.kind == .segment {
                $0.segments += 1
                if resource.playlistURL == variantTrack { $0.seconds += resource.duration }
            }
        }
    }
}
