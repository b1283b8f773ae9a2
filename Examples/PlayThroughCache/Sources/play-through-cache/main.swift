import Foundation
import MediaServer
import MediaStore
import MediaStreaming

// play-through-cache URL [--store DIR] [--player PATH]
//
// Opens (or creates) a store, serves it on 127.0.0.1 with MediaServer, and
// has a player decode the URL through the server to the end: ffmpeg by
// default (`ffmpeg -v error -i LOCAL -f null -`). Bytes missing from the
// store come from the origin and are kept; bytes already there are read
// from the store. Prints the bytes the player got and those the origin sent. Exit status: the
// player's, or 2 for a bad command line, 1 when the store cannot open.

struct Options {
    var url: URL
    var store: URL
    var player: String

    static let usage = "usage: play-through-cache URL [--store DIR] [--player PATH]"

    static func parse(_ arguments: [String]) -> Options? {
        var rest = arguments[...]
        var url: URL?
        var store = URL(fileURLWithPath: "play-through-cache-store", isDirectory: true)
        var player = "ffmpeg"
        while let argument = rest.popFirst() {
            switch argument {
            case "--store":
                guard let path = rest.popFirst(), !path.isEmpty else { return nil }
                store = URL(fileURLWithPath: path, isDirectory: true)
            case "--player":
                guard let path = rest.popFirst(), !path.isEmpty else { return nil }
                player = path
            default:
                guard url == nil, let parsed = URL(string: argument),
                    parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil
                else { return nil }
                url = parsed
            }
        }
        guard let url else { return nil }
        return Options(url: url, store: store, player: player)
    }
}

func standardError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs the player on `local` and returns its exit status.
func play(_ local: URL, with player: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [player, "-v", "error", "-nostdin", "-i", local.absoluteString, "-f", "null", "-"]
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

guard let options = Options.parse(Array(CommandLine.arguments.dropFirst())) else {
    standardError(Options.usage)
    exit(2)
}

let store: MediaStore
do {
    store = try MediaStore(directory: options.store)
} catch {
    standardError("play-through-cache: the store at \(options.store.path) cannot open: \(error)")
    exit(1)
}
let cache = StreamingCache(store: store)
let server = MediaServer(cache: cache)
do {
    try server.start()
} catch {
    standardError("play-through-cache: the server cannot start: \(error)")
    exit(1)
}
let local = server.url(for: options.url)
let status: Int32
do {
    status = try play(local, with: options.player)
} catch {
    standardError("play-through-cache: \(options.player) cannot start: \(error)")
    exit(1)
}
server.stop()
let origin = cache.statistics
print("played \(options.url.absoluteString) through \(local.host ?? "127.0.0.1"):\(local.port ?? 0)")
print("to the player:   \(server.statistics.bodyBytesSent) bytes")
print("from the origin: \(origin.originBytes) bytes in \(origin.originRequests) requests")
if let stats = try? store.statistics() {
    print("store: \(stats.entryCount) entries, \(stats.logicalBytes) bytes")
}
store.close()
exit(status)
