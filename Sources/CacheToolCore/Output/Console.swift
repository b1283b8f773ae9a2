import Foundation
import MediaStore
import MediaSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where cachetool writes: standard output for results, standard error
/// for errors and progress. Progress only when standard error is a
/// terminal, so piped and scripted runs stay silent.
public final class Console: Sendable {
    private struct Progress {
        var shown = false
        var last = Date.distantPast
    }

    private let output: FileHandle
    private let errors: FileHandle
    private let showsProgress: Bool
    /// Progress may be reported from worker threads (verify, import) while
    /// results are printed: the line's state and its writes go together.
    private let progressLine = Locked(Progress())

    public init(output: FileHandle = .standardOutput, errors: FileHandle = .standardError, showsProgress: Bool? = nil) {
        self.output = output
        self.errors = errors
        self.showsProgress = showsProgress ?? (isatty(errors.fileDescriptor) == 1)
    }

    /// Writes `text` and a newline to standard output.
    public func print(_ text: String) {
        write(Data((text + "\n").utf8))
    }

    /// Writes raw bytes to standard output.
    public func write(_ data: Data) {
        endProgress()
        do {
            try output.write(contentsOf: data)
        } catch {
            // The reader went away (a closed pipe): stop quietly, as cat does.
            exit(1)
        }
    }

    /// Writes `text` and a newline to standard error.
    public func printError(_ text: String) {
        endProgress()
        try? errors.write(contentsOf: Data((text + "\n").utf8))
    }

    /// Shows `text` as the progress line (at most ten times a second).
    public func progress(_ text: @autoclosure () -> String) {
        guard showsProgress else { return }
        let now = Date()
        progressLine.withLock { line in
            guard now.timeIntervalSince(line.last) >= 0.1 else { return }
            line.last = now
            line.shown = true
            try? errors.write(contentsOf: Data(("\r\u{1B}[2K" + text()).utf8))
        }
    }

    /// Clears the progress line.
    public func endProgress() {
        progressLine.withLock { line in
            guard line.shown else { return }
            line.shown = false
            try? errors.write(contentsOf: Data("\r\u{1B}[2K".utf8))
        }
    }
}
