import Foundation

/// A parsed playlist: a master playlist or a media playlist.
public enum Playlist: Sendable, Hashable {
    case master(MasterPlaylist)
    case media(MediaPlaylist)

    /// The URL the playlist was read from.
    public var url: URL {
        switch self {
        case .master(let master): master.url
        case .media(let media): media.url
        }
    }

    /// The master playlist, if this is one.
    public var master: MasterPlaylist? {
        if case .master(let master) = self { return master }
        return nil
    }

    /// The media playlist, if this is one.
    public var media: MediaPlaylist? {
        if case .media(let media) = self { return media }
        return nil
    }
}
