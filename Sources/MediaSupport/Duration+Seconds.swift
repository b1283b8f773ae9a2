extension Duration {
    /// The duration in seconds, for APIs that take a `Double` (socket
    /// timeouts, `URLSessionConfiguration`, error messages).
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
