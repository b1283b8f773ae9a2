/// One option a command accepts: `--name`, `-n`, with or without a value.
public struct OptionSpec: Sendable, Equatable {
    /// The long name without dashes (`range` for `--range`).
    public var name: String
    /// The one-letter short form, if any (`h` for `-h`).
    public var short: Character?
    /// The placeholder of its value (`A-B`), or `nil` for a flag.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// Whether it may be given more than once (values accumulate).
    public var repeatable: Bool

    public init(_ name: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.short = short
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
    }

    /// Whether the option takes a value.
    public var takesValue: Bool { valueName != nil }
}
