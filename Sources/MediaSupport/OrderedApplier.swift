import Foundation

/// Applies numbered values to a target whose setter may call back into
/// the caller synchronously, as Foundation's `Progress` notifies its
/// observers on the thread that sets it.
///
/// Values are applied in the order of their numbers (an older value
/// offered late is dropped), one at a time, and never under a lock: an
/// observer that causes another value to be offered, on the applying
/// thread, does not deadlock; that value is applied once the observer
/// returns. `offer` returns once its value, or a newer one, has been
/// applied, except when called from inside `apply`.
package final class OrderedApplier<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private let apply: @Sendable (Value) -> Void
    // Guarded by `condition`.
    private var pending: (number: UInt64, value: Value)?
    private var applied: UInt64 = 0
    private var applier: pthread_t?

    /// `apply` is called with each value applied, outside any lock.
    package init(apply: @escaping @Sendable (Value) -> Void) {
        self.apply = apply
    }

    /// Offers `value`, numbered `number` by the caller in the order the
    /// values were read (numbers start at 1).
    package func offer(_ value: Value, number: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        if number > max(applied, pending?.number ?? 0) { pending = (number, value) }
        let me = pthread_self()
        while let other = applier {
            // Called from inside `apply`: the running loop applies it next.
            if pthread_equal(other, me) != 0 { return }
            condition.wait()
            if applied >= number { return }
        }
        applier = me
        while let next = pending {
            pending = nil
            condition.unlock()
            apply(next.value)
            condition.lock()
            applied = next.number
        }
        applier = nil
        condition.broadcast()
    }
}
