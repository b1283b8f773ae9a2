/// A parsed command line.
public struct ParsedArguments: Sendable, Equatable {
    /// The subcommand, or `nil` when only global options (or nothing) were given.
    public var command: CommandSpec?
    /// Values of options that take one, by long name, in order given.
    public var values: [String: [String]] = [:]
    /// Flags given, by long name.
    public var flags: Set<String> = []
    /// Positional arguments, in order.
    public var positionals: [String] = []

    public init(command: CommandSpec? = nil) {
        self.command = command
    }

    /// Whether `--help` (or `-h`) was given.
    public var wantsHelp: Bool { flags.contains("help") }

    /// The last value of option `name`, if given.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// Whether flag `name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }
}
