import Foundation

/// Cuts a master playlist down to the variants and renditions whose media
/// playlists are available (such as those an offline download kept), the
/// way an offline `AVURLAsset` offers only the media selections that were
/// downloaded: a player then never asks for a playlist that is not there.
/// Pure; works on the text, line by line, like ``PlaylistRewriter``.
///
/// Dropped: an `EXT-X-STREAM-INF` and its URI line, an `EXT-X-MEDIA` or
/// `EXT-X-I-FRAME-STREAM-INF` whose URI is not available. A kept variant's
/// `AUDIO`, `SUBTITLES` or `VIDEO` attribute naming a group left with no
/// rendition is removed (so the playlist stays valid). A kept variant
/// whose `AUDIO` group lost every rendition is dropped instead, as long as
/// another kept variant keeps its audio: offered without its group, it
/// would play silent (an Apple-style master lists one video playlist once
/// per audio group; a download keeps one group). When no variant would be
/// left, the playlist is returned as it was.
public enum MasterPlaylistFilter {
    /// `data`, a master playlist read from `url`, keeping what `isAvailable`
    /// accepts (given each resolved media playlist URL). A media playlist
    /// is returned unchanged. Throws what parsing `data` within `limits` throws.
    public static func filter(
        _ data: Data, url: URL, limits: PlaylistLimits = PlaylistLimits(), isAvailable: (URL) -> Bool
    ) throws(PlaylistError) -> Data {
        try PlaylistParser.checkSize(data.count, limits: limits)
        let bytes = [UInt8](data)
        guard case .master(let master) = try PlaylistParser.parse(bytes: bytes, url: url, limits: limits) else {
            return data
        }
        let keptVariants = master.variants.filter { isAvailable($0.url) }
        guard !keptVariants.isEmpty else { return data }
        let keptRenditions = master.renditions.filter { $0.url.map(isAvailable) ?? true }
        let groups = Set(keptRenditions.map { "\($0.type.rawValue) \($0.groupID)" })
        if keptVariants.count == master.variants.count, keptRenditions.count == master.renditions.count,
            master.iFramePlaylistURLs.allSatisfy(isAvailable)
        {
            return data
        }
        // AUDIO groups whose renditions (with URIs) were all dropped: a
        // variant naming one would be offered silent. Dropped when another
        // kept variant keeps its audio.
        let lostAudio = Set(master.renditions.filter { $0.type == .audio }.map(\.groupID))
            .subtracting(keptRenditions.filter { $0.type == .audio }.map(\.groupID))
        let dropSilent = keptVariants.contains { $0.audioGroup.map { !lostAudio.contains($0) } ?? true }
        var output: [UInt8] = []
        var heldStreamInf: [UInt8]?
        var heldLosesAudio = false
        for line in PlaylistLine.split(bytes) {
            let content = String(decoding: bytes[line.content], as: UTF8.self)
            let text = content.trimmingCharacters(in: [" ", "\t", "\r"])
            let ending = Array(bytes[line.content.upperBound..<line.whole.upperBound])
            if line.number > 1, !text.isEmpty, !text.hasPrefix("#") {
                // A variant's URI line: it and its EXT-X-STREAM-INF go together.
                let held = heldStreamInf
                heldStreamInf = nil
                guard let resolved = try? PlaylistParser.resolve(text, base: url, line: line.number),
                    isAvailable(resolved), !(dropSilent && heldLosesAudio)
                else { continue }
                if let held { output += held }
                output += bytes[line.whole]
                continue
            }
            if text.hasPrefix("#EXT-X-STREAM-INF:") {
                heldStreamInf = Array(streamInf(text, groups: groups, line: line.number).utf8) + ending
                let attributes = try? AttributeList(
                    text.drop { $0 != ":" }.dropFirst(), tag: "EXT-X-STREAM-INF", line: line.number)
                let audio = attributes?["AUDIO"]
                heldLosesAudio = audio.map { lostAudio.contains(String($0.value)) } ?? false
                continue
            }
            if text.hasPrefix("#EXT-X-MEDIA:") || text.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") {
                let tag = String(text.dropFirst().prefix { $0 != ":" })
                let value = text.drop { $0 != ":" }.dropFirst()
                if let attributes = try? AttributeList(value, tag: tag, line: line.number),
                    let uri = attributes["URI"],
                    let resolved = try? PlaylistParser.resolve(String(uri.value), base: url, line: line.number),
                    !isAvailable(resolved)
                {
                    continue
                }
            }
            output += bytes[line.whole]
        }
        return Data(output)
    }

    /// The `EXT-X-STREAM-INF` line `text` without group attributes naming a group in none of `groups`.
    static func streamInf(_ text: String, groups: Set<String>, line: Int) -> String {
        let value = text.drop { $0 != ":" }.dropFirst()
        guard let attributes = try? AttributeList(value, tag: "EXT-X-STREAM-INF", line: line) else { return text }
        let types = ["AUDIO": "AUDIO", "SUBTITLES": "SUBTITLES", "VIDEO": "VIDEO"]
        let kept = attributes.attributes.filter { attribute in
            guard let type = types[String(attribute.name)] else { return true }
            return groups.contains("\(type) \(attribute.value)")
        }
        guard kept.count != attributes.attributes.count else { return text }
        return "#EXT-X-STREAM-INF:"
            + kept.map { $0.isQuoted ? "\($0.name)=\"\($0.value)\"" : "\($0.name)=\($0.value)" }.joined(separator: ",")
    }
}
