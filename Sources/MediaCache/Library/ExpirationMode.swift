/// Unused upstream too (a leftover of Cache 4.x); kept for source compatibility.
@available(*, deprecated, message: "Unused: expiry is per object; call removeExpiredObjects() to sweep.")
public enum ExpirationMode: Sendable {
    case auto
    case manual
}
