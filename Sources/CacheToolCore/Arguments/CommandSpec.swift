/// One row of the command table: a subcommand, what it accepts, and
/// whether it opens the store for writing.
public struct CommandSpec: Sendable, Equatable {
    /// The subcommand (`cat`).
    public var name: String
    /// One line for the command list.
    public var summary: String
    /// Its positional arguments, in order.
    public var positionals: [PositionalSpec]
    /// Its own options (the global ones are added by the parser).
    public var options: [OptionSpec]
    /// Whether it writes (opens the store read-write).
    public var writes: Bool
    /// Extra paragraphs for `--help`.
    public var details: String

    public init(
        _ name: String, summary: String, positionals: [PositionalSpec] = [], options: [OptionSpec] = [],
        writes: Bool = false, details: String = ""
    ) {
        self.name = name
        self.summary = summary
        self.positionals = positionals
        self.options = options
        self.writes = writes
        self.details = details
    }

    /// `cachetool cat [options] KEY`
    public var usageLine: String {
        var parts = ["cachetool", name]
        parts.append("[options]")
        for positional in positionals {
            let text = positional.name + (positional.variadic ? "..." : "")
            parts.append(positional.required ? text : "[\(text)]")
        }
        return parts.joined(separator: " ")
    }
}
