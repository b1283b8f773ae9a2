#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `close(2)`, for code inside types that have a `close()` method of
/// their own (``MediaStore``, `LMDBEnvironment`), where the bare name
/// means the method.
@discardableResult
func closeFileDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
