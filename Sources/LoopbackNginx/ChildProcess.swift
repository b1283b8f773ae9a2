import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process that inherits no descriptor but its standard input,
/// output and error (each `/dev/null` or a file it opens itself), and
/// whose end is learned with `waitpid`.
///
/// Foundation's `Process` on Linux (swift-corelibs-foundation before
/// 81eb85a2a, which the 6.3 toolchain has) lists /proc/self/fd as it
/// starts, copying each entry as a whole 256-byte `dirent`: with more than
/// about 1,350 descriptors open, the last copy reads past the end of
/// glibc's 32 KiB `readdir` buffer, and the process dies of SIGSEGV when
/// the next page is unmapped. A `ChildProcess` lists nothing (below).
///
/// Foundation's `Process` on Linux is also unsafe when several threads start
/// processes at once: it emulates `POSIX_SPAWN_CLOEXEC_DEFAULT` by listing
/// the descriptors open *before* it spawns, so a descriptor another thread
/// opens meanwhile (the socket pair by which another `Process` learns that
/// its child exited, the pipe another one reads to its end, an accepted
/// connection) leaks into the child. When that child lives long (nginx for
/// a whole test), the other `Process`'s `waitUntilExit()` or
/// `readDataToEndOfFile()` waits for it, forever if the waiting thread is
/// the one that would stop it. Here the child closes every descriptor from
/// 3 up as it starts (`posix_spawn_file_actions_addclosefrom_np`;
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin), which no other thread can race.
public final class ChildProcess: @unchecked Sendable {
    /// A reason a process could not be started.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The child's process id.
    public let processIdentifier: Int32
    /// Guards `reaped`.
    private let lock = NSLock()
    /// The wait status once reaped.
    private var reaped: Int32?

    /// Starts `executable` (a path, or a name looked up in `PATH`) with
    /// `arguments`, in a process group of its own (as `Process` does, so
    /// that a signal to the test's group does not reach it).
    ///
    /// - Parameters:
    ///   - environment: The child's whole environment; `nil` passes this
    ///     process's.
    ///   - standardInput: A file the child reads as its input; `nil` for
    ///     `/dev/null`.
    ///   - standardOutput: A file the child writes its output to (created or
    ///     truncated); `nil` for `/dev/null`.
    ///   - standardError: The same for its error output. The same path as
    ///     `standardOutput` shares that one open file, so the two streams
    ///     land in the order written.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        standardInput: String? = nil, standardOutput: String? = nil, standardError: String? = nil
    ) throws(Failure) {
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
            var attributes: posix_spawnattr_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        let create = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, standardInput ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput ?? "/dev/null", create, 0o644)
        if let standardError, standardError == standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", create, 0o644)
        }
        var flags = Int32(POSIX_SPAWN_SETPGROUP)
        #if canImport(Glibc)
            if let closeFrom = Self.addCloseFrom {
                _ = closeFrom(&actions, 3)
            } else {
                // glibc before 2.34: the descriptors open now (racy, as `Process`).
                let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
                    posix_spawn_file_actions_addclose(&actions, descriptor)
                }
            }
        #else
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        posix_spawnattr_setpgroup(&attributes, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { variables in
            variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        func spawn(_ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
            executable.contains("/")
                ? posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
                : posix_spawnp(&pid, executable, &actions, &attributes, argv, environment)
        }
        let result = envp.map { spawn($0) } ?? spawn(environ)
        guard result == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
    }

    #if canImport(Glibc)
        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later;
        /// declared only for `_GNU_SOURCE`, which Swift's Glibc module lacks).
        private static let addCloseFrom:
            (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
                guard
                    let symbol = dlsym(
                        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
                else { return nil }
                return unsafeBitCast(
                    symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
                )
            }()
    #endif

    /// Whether the child has not ended yet (reaping it if it has).
    public var isRunning: Bool { reap() == nil }

    /// The exit code, or the signal number when a signal ended it
    /// (as `Process.terminationStatus`); `nil` while it runs.
    public var terminationStatus: Int32? {
        guard let status = reap() else { return nil }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Whether a signal ended it; `nil` while it runs.
    public var endedBySignal: Bool? {
        reap().map { $0 & 0x7f != 0 }
    }

    /// Sends `signal` to the child unless it was already reaped.
    public func kill(_ signal: Int32 = SIGKILL) {
        lock.withLock {
            #if canImport(Glibc)
                if reaped == nil { _ = Glibc.kill(processIdentifier, signal) }
            #else
                if reaped == nil { _ = Darwin.kill(processIdentifier, signal) }
            #endif
        }
    }

    /// Blocks the calling thread until the child ends (polling every few
    /// milliseconds: no thread of the process is kept waiting in
    /// `waitpid`, and any thread may ask at the same time).
    public func waitUntilExit() {
        while reap() == nil { usleep(5_000) }
    }

    /// Waits for the end without blocking a thread of the cooperative pool.
    /// When the awaiting task is cancelled (a test's time limit), the child
    /// is killed with `SIGKILL`, so the wait still ends.
    public func exit() async {
        while reap() == nil {
            if Task.isCancelled {
                kill(SIGKILL)
                usleep(1_000)
            } else {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// The wait status, reaping the child if it ended; `nil` while it runs.
    private func reap() -> Int32? {
        lock.withLock { () -> Int32? in
            if let reaped { return reaped }
            var raw: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(processIdentifier, &raw, WNOHANG) } while result < 0 && errno == EINTR
            if result == processIdentifier {
                reaped = raw
            } else if result < 0 {
                // Reaped by someone else (ECHILD): ended, cause unknown.
                reaped = 0
            }
            return reaped
        }
    }

    deinit {
        // A child never waited for would stay a zombie.
        _ = reap()
    }
}
