import Foundation
import HLSPlaylist
import MediaStreaming

/// A local URL of an HLS resource on a ``MediaServer``: the origin URL,
/// what it is (so the server knows to rewrite a playlist, and which
/// `Content-Type` to give), the type of the rendition it belongs to, and
/// its byte range. Pure.
///
/// The path is `/<secret>/h/<origin>/<tag>/<name>`: the origin in
/// base64url as in ``ServerRoute``, then a tag of one letter for the kind
/// (`m` master playlist, `p` media playlist, `f` I-frame playlist, `k` key,
/// `i` init segment, `s` segment, `o` other), an optional letter for the
/// rendition type (`a` audio, `v` video, `t` subtitles, `c` closed
/// captions), and an optional `.offset.length` byte range; then the
/// origin's file name, for players that look at the extension.
public struct HLSRoute: Sendable, Hashable {
    public var origin: URL
    public var kind: HLSResourceKind
    public var mediaType: Rendition.MediaType?
    public var byteRange: ByteRange?

    public init(origin: URL, kind: HLSResourceKind, mediaType: Rendition.MediaType? = nil, byteRange: ByteRange? = nil)
    {
        self.origin = origin
        self.kind = kind
        self.mediaType = mediaType
        self.byteRange = byteRange
    }

    private static let kindLetters: [(HLSResourceKind, Character)] = [
        (.masterPlaylist, "m"), (.mediaPlaylist, "p"), (.iFramePlaylist, "f"), (.key, "k"),
        (.initializationSegment, "i"), (.segment, "s"), (.other, "o"),
    ]
    private static let mediaLetters: [(Rendition.MediaType, Character)] = [
        (.audio, "a"), (.video, "v"), (.subtitles, "t"), (.closedCaptions, "c"),
    ]

    /// Whether it is a playlist (served rewritten).
    public var isPlaylist: Bool { [.masterPlaylist, .mediaPlaylist, .iFramePlaylist].contains(kind) }

    /// The tag path segment.
    public var tag: String {
        var tag = String(Self.kindLetters.first { $0.0 == kind }!.1)
        if let mediaType { tag.append(Self.mediaLetters.first { $0.0 == mediaType }!.1) }
        if let byteRange { tag += ".\(byteRange.offset).\(byteRange.length)" }
        return tag
    }

    /// The path of its local URL (without scheme and host).
    public func path(secret: String) -> String {
        let name = origin.lastPathComponent.addingPercentEncoding(withAllowedCharacters: ServerRoute.nameCharacters)
        let last = (name?.isEmpty ?? true) || name == "/" ? "media" : name!
        return "/\(secret)/h/\(ServerRoute.encodeOrigin(origin))/\(tag)/\(last)"
    }

    /// The route of an origin (already decoded) and a tag; nil when the tag is malformed.
    public static func parse(origin: URL, tag: String) -> HLSRoute? {
        guard tag.utf8.count <= 64 else { return nil }
        let parts = tag.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 3 else { return nil }
        let letters = Array(parts[0])
        guard letters.count == 1 || letters.count == 2,
            let kind = kindLetters.first(where: { $0.1 == letters[0] })?.0
        else { return nil }
        var mediaType: Rendition.MediaType?
        if letters.count == 2 {
            guard let type = mediaLetters.first(where: { $0.1 == letters[1] })?.0 else { return nil }
            mediaType = type
        }
        var byteRange: ByteRange?
        if parts.count == 3 {
            guard let offset = decimal(parts[1]), let length = decimal(parts[2]),
                let range = ByteRange(offset: offset, length: length)
            else { return nil }
            byteRange = range
        }
        return HLSRoute(origin: origin, kind: kind, mediaType: mediaType, byteRange: byteRange)
    }

    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(text)
    }
}
