import Foundation

@testable import MediaStore
@testable import MediaStreaming

/// A player on a loader over `origin` (four chunks per request) whose new
/// entries are prepared only once `preparation` returns (the fetcher's
/// `entryPreparation` seam): a store slow to commit, held by a test.
struct GatedPreparation {
    let cache: StreamingCache
    let url: URL
    let loader: ResourceLoader
    let fetcher: ResourceFetcher
    let player: PlayerSimulator

    init(
        store: MediaStore, origin: FakeOrigin, name: String, stallTimeout: Duration = .seconds(15),
        preparation: @escaping @Sendable () async -> Void
    ) {
        let configuration = StreamingConfiguration(chunksPerRequest: 4, stallTimeout: stallTimeout)
        configuration.fetcherHooks.entryPreparation.withLock { $0 = preparation }
        cache = StreamingCache(store: store, origin: origin, configuration: configuration)
        url = URL(string: "https://origin.example/\(name)")!
        loader = cache.loader(for: url)
        fetcher = cache.fetcher(forKey: loader.cacheKey)
        player = PlayerSimulator(loader: loader)
    }
}
