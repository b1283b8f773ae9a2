import Foundation
import Testing

@testable import MediaCache

/// The seed scenario: a player worker looks a track up, downloads it on a
/// miss, stores it, and finds it on the next run.
@Suite struct SeedScenarioTests {
    struct Track: Codable, Equatable, Sendable {
        var url: String
        var bytes: Data
    }

    final class Origin: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var downloads = 0

        func download(_ url: String) async -> Track {
            lock.withLock { downloads += 1 }
            return Track(url: url, bytes: Data(url.utf8) + Data(repeating: 7, count: 50_000))
        }
    }

    struct PlayerWorker {
        let storage: Storage<String, Track>
        let origin: Origin

        func play(_ url: String) async throws -> Track {
            do {
                let entry = try await storage.async.entry(forKey: url)
                if !entry.expiry.isExpired { return entry.object }
            } catch StorageError.notFound {}
            let track = await origin.download(url)
            try await storage.async.setObject(track, forKey: url, expiry: .seconds(3600))
            return track
        }
    }

    @Test func secondRunFindsTheTrack() async throws {
        let temp = ScratchDirectory()
        let origin = Origin()
        let url = "https://cdn.example.com/tracks/42.mp3?token=abc"
        func run() async throws -> Track {
            let storage = try Storage<String, Track>(
                diskConfig: DiskConfig(name: "Tracks", directory: temp.url),
                memoryConfig: MemoryConfig(countLimit: 10),
                transformer: TransformerFactory.forCodable(ofType: Track.self))
            return try await PlayerWorker(storage: storage, origin: origin).play(url)
        }
        let first = try await run()
        #expect(origin.downloads == 1)
        let second = try await run()
        #expect(origin.downloads == 1)
        #expect(first == second)
    }
}
