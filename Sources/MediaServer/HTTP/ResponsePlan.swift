/// How to answer one `GET` or `HEAD` for a representation: the head to
/// send and which bytes follow it.
public struct ResponsePlan: Sendable, Equatable {
    /// The status line and fields (without `Connection`, which the connection adds).
    public var head: ResponseHead
    /// The bytes of the representation to send after the head; `nil` for none
    /// (`HEAD`, `304`, `416`, `412`).
    public var body: Range<Int>?
    /// A short body to send instead of representation bytes (the text of a `416`).
    public var message: [UInt8]

    public init(head: ResponseHead, body: Range<Int>?, message: [UInt8] = []) {
        self.head = head
        self.body = body
        self.message = message
    }
}
