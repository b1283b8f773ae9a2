/// One positional argument of a command.
public struct PositionalSpec: Sendable, Equatable {
    /// Its placeholder in the usage line (`KEY`).
    public var name: String
    /// Whether it must be given.
    public var required: Bool
    /// Whether it takes all remaining arguments (`KEY…`); only the last may.
    public var variadic: Bool

    public init(_ name: String, required: Bool = true, variadic: Bool = false) {
        self.name = name
        self.required = required
        self.variadic = variadic
    }
}
