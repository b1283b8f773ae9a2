import Foundation
import MediaServer
import MediaStore
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension CacheTool {
    /// `serve`: a ``MediaServer`` over the store; prints the local URL of
    /// each `--print-url`, then serves until killed or idle for `--idle-exit` seconds.
    func serve(_ parsed: ParsedArguments) throws {
        var configuration = MediaServerConfiguration()
        if let text = parsed.value("port") {
            guard let port = Int(text), (0...65535).contains(port) else {
                throw UsageError("--port takes 0 to 65535", command: "serve")
            }
            configuration.port = port
        }
        var idleExit: Double?
        if let text = parsed.value("idle-exit") {
            guard let seconds = Double(text), seconds > 0 else {
                throw UsageError("--idle-exit takes a number of seconds", command: "serve")
            }
            idleExit = seconds
        }
        do {
            configuration.allowlist = try OriginAllowlist(validating: parsed.values["origin-allow"] ?? [])
        } catch {
            throw UsageError("--origin-allow: \(error.description)", command: "serve")
        }
        configuration.secret = parsed.value("secret")
        if parsed.flag("lan") { configuration.binding = .allInterfaces }
        var origins: [URL] = []
        for text in parsed.values["print-url"] ?? [] {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else {
                throw UsageError("--print-url takes an http or https URL, not '\(text)'", command: "serve")
            }
            origins.append(url)
        }
        // A parent may have started us with these blocked (a dispatch worker's
        // mask is inherited through posix_spawn): Ctrl-C and kill must stop the server.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&stopSignals, signal) }
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        let store = try openStore(parsed, write: true, create: true)
        // Every redirect hop passes the allowlist (or stays on its origin), as the first URL does.
        let origin = HTTPOrigin(redirects: configuration.allowlist.redirectPolicy())
        let server = MediaServer(cache: StreamingCache(store: store, origin: origin), configuration: configuration)
        do {
            try server.start()
        } catch {
            throw ToolError(error.description)
        }
        for origin in origins { console.print(server.url(for: origin).absoluteString) }
        let port = server.port ?? 0
        console.printError(
            "cachetool: serving \(storeDirectory(parsed).path) on \(parsed.flag("lan") ? "every interface" : "127.0.0.1"), port \(port)"
                + (idleExit.map { "; exits after \($0) s idle" } ?? "; Ctrl-C stops"))
        var idleSince = Date()
        while true {
            Thread.sleep(forTimeInterval: 0.1)
            if server.statistics.activeConnections > 0 { idleSince = Date() }
            if let idleExit, Date().timeIntervalSince(idleSince) >= idleExit { break }
        }
        server.stop()
    }
}
