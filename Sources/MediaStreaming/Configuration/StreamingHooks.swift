import MediaSupport

/// Points where a test sees a ``ResourceFetcher`` at work, injected
/// through ``StreamingConfiguration/fetcherHooks``: none is set by
/// default, and a fetcher only calls what is set.
package final class FetcherHooks: Sendable {
    /// Called after an observer of the resource's events has been registered.
    package let observerRegistered = Locked<(@Sendable () -> Void)?>(nil)

    package init() {}
}
