import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileHandle {
    /// What `availableData` gives (the bytes ready now, waiting for some;
    /// empty at the end), with `read(2)` retried when a signal interrupts
    /// it. Foundation's `availableData` traps on `EINTR` on Linux, which a
    /// busy test run (children exiting, timers) makes happen now and then.
    public func availableBytes() -> Data {
        #if canImport(Glibc)
            let systemRead = Glibc.read
        #else
            let systemRead = Darwin.read
        #endif
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }
}
