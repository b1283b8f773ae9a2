import Foundation
import HLSPlaylist
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming
import MediaSupport

extension CacheTool {
    /// `ls --hls`: the HLS assets, grouped, with completeness per media playlist.
    func listHLS(_ parsed: ParsedArguments) throws {
        let store = try openStore(parsed)
        let assets = try HLSAssetSummary.assets(in: store)
        if parsed.flag("json") {
            printJSON(
                "ls",
                [
                    ("store", .string(store.directory.path)),
                    ("assets", .array(assets.map { .object(Self.json($0)) })),
                ])
            return
        }
        for asset in assets { printHLS(asset) }
    }

    static func json(_ asset: HLSAssetSummary) -> [(String, JSONValue)] {
        [
            ("key", .string(asset.key)), ("url", asset.url.map { .string($0.absoluteString) } ?? .null),
            ("entries", .int(asset.entries.count)), ("bytes", .int(asset.bytes)),
            ("complete", .bool(asset.isComplete)), ("pinned", .bool(asset.isPinned)),
            (
                "tracks",
                .array(
                    asset.tracks.map { track in
                        .object([
                            ("key", .string(track.key)), ("role", .string(track.role)),
                            ("storedSegments", .int(track.storedSegments)),
                            ("totalSegments", track.totalSegments.map { .int($0) } ?? .null),
                            ("duration", .double(rounded(track.duration))), ("complete", .bool(track.isComplete)),
                        ])
                    })
            ),
        ]
    }

    func printHLS(_ asset: HLSAssetSummary) {
        let flags = (asset.isComplete ? "C" : "-") + (asset.isPinned ? "P" : "-")
        console.print("\(asset.entries.count) entries, \(asset.bytes) bytes \(flags) \(Self.printable(asset.key))")
        for track in asset.tracks {
            let total = track.totalSegments.map(String.init) ?? "?"
            let count = "\(track.storedSegments)/\(total)".padding(toLength: 9, withPad: " ", startingAt: 0)
            console.print(
                "  \(count) \(track.role.padding(toLength: 9, withPad: " ", startingAt: 0)) \(Self.printable(track.key))"
            )
        }
    }

    /// `hls-get URL`: an ``HLSDownloader`` into the store, a line per resource.
    func downloadHLS(_ parsed: ParsedArguments) throws {
        guard let url = URL(string: parsed.positionals[0]), ["http", "https"].contains(url.scheme?.lowercased() ?? "")
        else { throw UsageError("hls-get takes an http or https URL", command: "hls-get") }
        var variant = VariantChoice.first
        if let text = parsed.value("max-bandwidth") {
            guard let limit = Int(text), limit > 0 else {
                throw UsageError("--max-bandwidth takes bits per second", command: "hls-get")
            }
            variant = .highestBandwidth(atMost: limit)
        }
        let audio = try Self.renditions(parsed.value("audio") ?? "auto", option: "audio")
        let subtitles = try Self.renditions(parsed.value("subtitles") ?? "none", option: "subtitles")
        var parallel = 4
        if let text = parsed.value("parallel") {
            guard let count = Int(text), (1...64).contains(count) else {
                throw UsageError("--parallel takes 1 to 64", command: "hls-get")
            }
            parallel = count
        }
        var headers: [String: String] = [:]
        for header in parsed.values["header"] ?? [] {
            let parts = header.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[0].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw UsageError("--header takes NAME: VALUE", command: "hls-get")
            }
            headers[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        let store = try openStore(parsed, write: true, create: true)
        // A redirect leaves its origin only for a public host, as a playlist URI does (PlaylistURIRule.publicHosts).
        let origin = HTTPOrigin(redirects: .sameOrigin(or: { HostClass(url: $0).isPublic }))
        let downloader = HLSDownloader(
            cache: StreamingCache(store: store, origin: origin), parallelFetches: parallel, uriRule: .publicHosts)
        let download = downloader.download(
            url, variant: variant, audio: audio, subtitles: subtitles, headers: headers)
        let json = parsed.flag("json")
        let console = self.console
        let outcome = BlockingWait { () async throws(DownloadError) -> DownloadProgress in
            var last = download.snapshot
            for await update in download.progressUpdates() {
                if !json, update.resources != last.resources || update.totalResources != last.totalResources {
                    console.print(
                        "resources \(update.resources)/\(update.totalResources) segments \(update.segments)/\(update.totalSegments) "
                            + "seconds \(String(format: "%.1f", update.seconds))/\(String(format: "%.1f", update.totalSeconds)) "
                            + "bytes \(update.bytes) fetched \(update.fetchedResources)")
                }
                last = update
            }
            try await download.completion()
            return download.snapshot
        }
        // Never abandoned: the wait ends with the download.
        switch outcome.wait() ?? .failure(.cancelled) {
        case .success(let progress):
            if json {
                printJSON(
                    "hls-get",
                    [
                        ("url", .string(url.absoluteString)), ("key", .string(download.assetKey)),
                        ("resources", .int(progress.resources)), ("segments", .int(progress.segments)),
                        ("seconds", .double(Self.rounded(progress.seconds))), ("bytes", .int(progress.bytes)),
                        ("fetched", .int(progress.fetchedResources)),
                    ])
            } else {
                console.print("done: \(download.assetKey)")
            }
        case .failure(let error):
            throw ToolError("cannot download \(url.absoluteString.prefix(200)): \(error)")
        }
    }

    static func renditions(_ text: String, option: String) throws -> RenditionRequest {
        switch text.lowercased() {
        case "auto": return .automatic
        case "all": return .all
        case "none": return RenditionRequest.none
        default:
            let languages = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !languages.isEmpty, languages.allSatisfy({ !$0.isEmpty && $0.count <= 35 }) else {
                throw UsageError("--\(option) takes auto, all, none or languages like en,fr", command: "hls-get")
            }
            return .languages(languages)
        }
    }
}
