/// A failure that ends a cachetool run with a one-line message.
public struct ToolError: Error, Sendable, CustomStringConvertible {
    /// The exit status: 1 error, 2 usage, 3 corruption.
    public var status: Int32
    /// The message, without the `cachetool:` prefix.
    public var message: String

    public init(status: Int32 = 1, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }
}
