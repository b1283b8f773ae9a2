/// Carries a value across the storage's serialization domain. Sound
/// because every access to storage state happens inside that domain.
// Unchecked by design: see above.
struct UncheckedSendable<Wrapped>: @unchecked Sendable {
    var value: Wrapped

    init(_ value: Wrapped) {
        self.value = value
    }
}
