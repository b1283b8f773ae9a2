/// A command line that cannot be run as given (exit status 2).
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, in one line.
    public var message: String
    /// The subcommand it concerns, for a pointer to its `--help`.
    public var command: String?

    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    public var description: String { message }
}
