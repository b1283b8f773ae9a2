@_spi(StandIn) import AVFoundation
import Foundation
import MediaStore
import MediaStreaming

@testable import MediaStreamingAVFoundationGlue

/// A `CachingAVPlayerItem` over a fresh store (16 KiB chunks) whose origin
/// is counted, and the stand-in resource loader AVFoundation would drive.
@MainActor
final class GlueHarness {
    static let chunkSize = 16 * 1024
    let directory: URL
    let origin: CountingOrigin
    let store: MediaStore
    let cache: StreamingCache
    let item: CachingAVPlayerItem
    let asset: AVURLAsset
    let resourceLoader: AVAssetResourceLoader

    init(_ url: URL, origin: CountingOrigin = CountingOrigin(), store existing: (MediaStore, URL)? = nil) throws {
        if let (store, directory) = existing {
            self.store = store
            self.directory = directory
        } else {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("avglue-\(UUID().uuidString)")
            store = try MediaStore(
                directory: directory,
                configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 64 << 20))
        }
        self.origin = origin
        cache = StreamingCache(
            store: store, origin: origin,
            configuration: StreamingConfiguration(chunksPerRequest: 2, stallTimeout: .seconds(5)))
        item = CachingAVPlayerItem(streamingItem: StreamingItem(url: url, cache: cache))
        guard let asset = item.asset as? AVURLAsset else {
            throw HarnessFailure("the item's asset is not an AVURLAsset")
        }
        self.asset = asset
        resourceLoader = asset.resourceLoader
    }

    /// A second item over the same store (a later play of the same track).
    func replay(_ url: URL, origin: CountingOrigin = CountingOrigin()) throws -> GlueHarness {
        try GlueHarness(url, origin: origin, store: (store, directory))
    }

    /// A request as AVFoundation makes one for the item's asset.
    func request(contentInformation: Bool = false, offset: Int64?, length: Int?) -> AVAssetResourceLoadingRequest {
        AVAssetResourceLoadingRequest(
            standInURL: asset.url, contentInformation: contentInformation, offset: offset, length: length)
    }

    /// Issues `request` and waits (up to 10 s) until it is finished.
    func load(_ request: AVAssetResourceLoadingRequest) async throws -> AVAssetResourceLoadingRequest {
        guard resourceLoader.standInIssue(request) == true else {
            throw HarnessFailure("the delegate did not take the request")
        }
        guard try await waitUntil({ request.isFinished }) else { throw HarnessFailure("the request never finished") }
        return request
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` every 5 ms for up to `seconds`.
@MainActor
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

extension AVAssetResourceLoadingRequest {
    /// How many times the glue finished the request (with or without an error).
    var finishes: Int {
        standInCalls.filter {
            if case .respond = $0.kind { return false }
            return true
        }.count
    }
}

/// Hands stand-in objects (not Sendable, like AVFoundation's) to another
/// thread, as AVFoundation does with its own.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
