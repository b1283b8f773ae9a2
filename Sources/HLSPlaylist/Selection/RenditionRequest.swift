/// Which renditions of a variant's AUDIO or SUBTITLES group to take.
public enum RenditionRequest: Sendable, Hashable {
    /// None.
    case none
    /// The one a player would pick by itself: the group's `DEFAULT=YES`
    /// rendition, else its first `AUTOSELECT=YES` one, else its first.
    case automatic
    /// One rendition per language (RFC 5646 tags, compared without case;
    /// `en` also matches `en-US`, an exact match is preferred), in the
    /// order asked. A language the group lacks is an error.
    case languages([String])
    /// Every rendition of the group.
    case all
}
