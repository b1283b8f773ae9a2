import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a child process writes to a file, read back while it runs: the
/// file is read again every 10 ms, with no reader thread and no pipe.
public enum ChildOutput {
    /// The file's text now (empty while it does not exist).
    public static func text(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    /// Reads the file at `path` until `done` holds for its text, the child
    /// has ended (`running` says no: the text is then all it wrote) or
    /// `seconds` have passed; returns the text last read. Blocks the
    /// calling thread meanwhile.
    public static func poll(
        _ path: String, seconds: Double = 30, running: () -> Bool, until done: (String) -> Bool
    ) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let ended = !running()
            let text = text(path)
            if done(text) || ended || Date() >= deadline { return text }
            usleep(10_000)
        }
    }

    /// The same, waiting without blocking a thread; it also stops when the
    /// awaiting task is cancelled.
    public static func poll(
        _ path: String, seconds: Double = 30, running: () -> Bool, until done: (String) -> Bool
    ) async -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let ended = !running()
            let text = text(path)
            if done(text) || ended || Date() >= deadline || Task.isCancelled { return text }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
