import Foundation

/// Chooses a variant of a master playlist and the renditions of its AUDIO
/// and SUBTITLES groups, the way `AVAssetDownloadTask` is given a variant
/// and media selections. Pure. VIDEO and CLOSED-CAPTIONS groups are not
/// selected (closed captions travel inside the video; alternative video
/// angles are not supported), and I-frame playlists are skipped.
public enum VariantSelector {
    public static func select(
        from master: MasterPlaylist, variant choice: VariantChoice = .first, audio: RenditionRequest = .automatic,
        subtitles: RenditionRequest = .none
    ) throws(SelectionError) -> HLSSelection {
        guard !master.variants.isEmpty else { throw .noVariants }
        guard let variant = choice.pick(master.variants) else { throw .noMatchingVariant }
        return HLSSelection(
            variant: variant,
            audio: try renditions(audio, type: .audio, group: variant.audioGroup, in: master),
            subtitles: try renditions(subtitles, type: .subtitles, group: variant.subtitlesGroup, in: master))
    }

    /// The renditions `request` asks for in `group`.
    static func renditions(
        _ request: RenditionRequest, type: Rendition.MediaType, group: String?, in master: MasterPlaylist
    ) throws(SelectionError) -> [Rendition] {
        let candidates = group.map { master.renditions(ofType: type, inGroup: $0) } ?? []
        switch request {
        case .none:
            return []
        case .all:
            return candidates
        case .automatic:
            return preferred(candidates).map { [$0] } ?? []
        case .languages(let languages):
            var chosen: [Rendition] = []
            for language in languages {
                let exact = candidates.filter { $0.language?.lowercased() == language.lowercased() }
                let prefixed = candidates.filter {
                    $0.language?.lowercased().hasPrefix(language.lowercased() + "-") == true
                }
                guard let rendition = preferred(exact) ?? preferred(prefixed) else {
                    throw .languageUnavailable(type: type, language: language, groupID: group)
                }
                if !chosen.contains(rendition) { chosen.append(rendition) }
            }
            return chosen
        }
    }

    /// `DEFAULT=YES`, else `AUTOSELECT=YES`, else the first.
    static func preferred(_ renditions: [Rendition]) -> Rendition? {
        renditions.first(where: \.isDefault) ?? renditions.first(where: \.autoselect) ?? renditions.first
    }
}
