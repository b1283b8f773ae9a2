extension Optional {
    /// The wrapped value, or `error` thrown (hyperoslo/Cache helper).
    public func unwrapOrThrow(error: Error) throws -> Wrapped {
        guard let value = self else { throw error }
        return value
    }
}
