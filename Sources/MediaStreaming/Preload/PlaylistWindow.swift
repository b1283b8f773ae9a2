/// Which items of a playlist to keep warm (pure).
enum PlaylistWindow {
    /// The indices of the `ahead` items after `current` in a playlist of
    /// `count` items (fewer at its end; none for a current index outside it).
    static func next(_ ahead: Int, after current: Int, count: Int) -> [Int] {
        guard current >= -1, current < count, ahead > 0 else { return [] }
        let first = current + 1
        return Array(first..<min(count, first + min(ahead, count)))
    }
}
