extension Int {
    /// `value` rounded up and clamped into `0...limit`: a byte count or a
    /// sample index computed in floating point from untrusted fields (an
    /// infinite or enormous ratio must not trap the conversion).
    init(clampingUp value: Double, limit: Int = 1 << 52) {
        guard value.isFinite else {
            self = value > 0 ? limit : 0
            return
        }
        self = Int(Swift.min(Swift.max(value.rounded(.up), 0), Double(limit)))
    }
}
