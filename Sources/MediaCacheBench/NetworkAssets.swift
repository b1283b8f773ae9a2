import Foundation

/// The media the `network` group serves, generated with ffmpeg on first
/// use and kept between runs (in a folder next to the bench's scratch
/// folder, keyed by its parameters; a folder appears only once complete):
///
/// - `hls/`: a VOD HLS asset, a 640×360 H.264 variant (about 1.6 Mb/s,
///   noise so that it does not compress away) and an alternate AAC audio
///   rendition (128 kb/s), 4-second MPEG-TS segments;
/// - `track.mp3`: a 128 kb/s constant-rate MP3 as long as the asset;
/// - `offline.bin`: random bytes for the progressive offline download.
struct NetworkAssets {
    /// The folder nginx serves.
    let root: URL
    /// Seconds of media in the HLS asset and the MP3.
    let seconds: Int
    /// Every file of the HLS asset, relative to ``root`` (`hls/…`).
    let hlsFiles: [String]
    /// Bytes of all of them.
    let hlsBytes: Int
    /// Media segments among them.
    let hlsSegments: Int
    /// Media playlists among them (the master's variant and renditions).
    let hlsMediaPlaylists: Int
    let trackBytes: Int
    let offlineBytes: Int

    static let master = "hls/master.m3u8"
    static let track = "track.mp3"
    static let offline = "offline.bin"

    /// Bytes of the MP3 that hold `seconds` of audio (constant rate).
    func trackBytes(forSeconds wanted: Double) -> Int {
        min(trackBytes, Int((Double(trackBytes) * wanted / Double(seconds)).rounded(.up)))
    }

    /// The assets of `seconds` of media and an `offlineBytes` file in
    /// `cache`, generating them with `ffmpeg` when missing; `log` hears
    /// what is generated.
    static func prepare(
        in cache: URL, seconds: Int, offlineBytes: Int, ffmpeg: ExternalTool, log: (String) -> Void
    ) throws -> NetworkAssets {
        let folder = cache.appendingPathComponent("network-v1-\(seconds)s-\(offlineBytes)B", isDirectory: true)
        if !FileManager.default.fileExists(atPath: folder.path) {
            log(
                "network: generating the media (\(seconds) s HLS asset and MP3, \(offlineBytes / 1_000_000) MB file) in \(folder.path)"
            )
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            let partial = cache.appendingPathComponent("partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            defer { try? FileManager.default.removeItem(at: partial) }
            try generate(in: partial, seconds: seconds, offlineBytes: offlineBytes, ffmpeg: ffmpeg)
            do {
                try FileManager.default.moveItem(at: partial, to: folder)
            } catch  where FileManager.default.fileExists(atPath: folder.path) {
                // Another run finished the same assets first: use theirs.
            }
        }
        return try load(folder, seconds: seconds)
    }

    private static func generate(in folder: URL, seconds: Int, offlineBytes: Int, ffmpeg: ExternalTool) throws {
        let hls = folder.appendingPathComponent("hls", isDirectory: true)
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        let limit = Double(max(300, seconds * 4))
        _ = try ffmpeg.run(
            [
                "-nostdin", "-loglevel", "error", "-y",
                "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25,noise=alls=30:allf=t",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-t", String(seconds), "-map", "0:v", "-map", "1:a",
                "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "1600k", "-maxrate", "1600k", "-bufsize", "3200k",
                "-g", "100", "-keyint_min", "100", "-sc_threshold", "0", "-c:a", "aac", "-b:a", "128k",
                "-f", "hls", "-hls_time", "4", "-hls_playlist_type", "vod",
                "-hls_segment_filename", hls.path + "/%v/s%d.ts", "-master_pl_name", "master.m3u8",
                "-var_stream_map", "v:0,agroup:aud,name:video a:0,agroup:aud,name:audio,language:en,default:yes",
                hls.path + "/%v/index.m3u8",
            ], scratch: folder, limit: limit)
        _ = try ffmpeg.run(
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=44100",
                "-t", String(seconds), "-c:a", "libmp3lame", "-b:a", "128k", folder.appendingPathComponent(track).path,
            ], scratch: folder, limit: limit)
        try BenchmarkRunner.writeRandomFile(
            folder.appendingPathComponent(offline), bytes: offlineBytes, seed: Workloads.largeSeed ^ 0x7e7)
    }

    private static func load(_ folder: URL, seconds: Int) throws -> NetworkAssets {
        let hls = folder.appendingPathComponent("hls", isDirectory: true)
        var files: [String] = []
        var bytes = 0
        let enumerator = FileManager.default.enumerator(at: hls, includingPropertiesForKeys: [.fileSizeKey])
        while let url = enumerator?.nextObject() as? URL {
            guard let size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize,
                !url.hasDirectoryPath
            else { continue }
            files.append(String(url.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1)))
            bytes += size
        }
        let segments = files.filter { $0.hasSuffix(".ts") }.count
        let playlists = files.filter { $0.hasSuffix(".m3u8") && $0 != master }.count
        func size(_ name: String) throws -> Int {
            try folder.appendingPathComponent(name).resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
        }
        guard files.contains(master), segments > 0, playlists > 0 else {
            throw ExternalTool.Failure(
                description: "network: \(folder.path) lacks the HLS asset; remove the folder to generate it again")
        }
        return NetworkAssets(
            root: folder, seconds: seconds, hlsFiles: files.sorted(), hlsBytes: bytes, hlsSegments: segments,
            hlsMediaPlaylists: playlists, trackBytes: try size(track), offlineBytes: try size(offline))
    }
}
