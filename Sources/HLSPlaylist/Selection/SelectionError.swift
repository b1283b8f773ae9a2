/// Why no variant or rendition could be chosen from a master playlist.
public enum SelectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The master playlist has no variants.
    case noVariants
    /// No variant satisfies the choice (such as none at or below a bandwidth).
    case noMatchingVariant
    /// The chosen variant's group of `type` has no rendition in `language`
    /// (`groupID` is nil when the variant names no such group).
    case languageUnavailable(type: Rendition.MediaType, language: String, groupID: String?)

    public var description: String {
        switch self {
        case .noVariants: "the master playlist has no variants"
        case .noMatchingVariant: "no variant matches"
        case .languageUnavailable(let type, let language, let groupID):
            if let groupID {
                "no \(type.rawValue) rendition in language \(language.prefix(50)) in group \(groupID.prefix(100))"
            } else {
                "the variant has no \(type.rawValue) group for language \(language.prefix(50))"
            }
        }
    }
}
