/// A property a fuzz entry point checks did not hold for an input.
///
/// The entry points throw it instead of trapping, so that the replay
/// tests report the input as a test failure; the libFuzzer targets turn it
/// into a crash with ``fuzzCrash(_:)``.
public struct FuzzFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Throws ``FuzzFailure`` with `message` unless `condition` holds.
@inlinable
public func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// Runs an entry point for libFuzzer: a failed check is a crash, which
/// is what libFuzzer records.
@discardableResult
public func fuzzCrash<R>(_ body: () throws(FuzzFailure) -> R) -> R {
    do {
        return try body()
    } catch {
        fatalError("fuzz check failed: \(error)")
    }
}
