import MediaSupport

/// Points where a test sees a ``ResourceFetcher`` at work, injected
/// through ``StreamingConfiguration/fetcherHooks``: none is set by
/// default, and a fetcher only calls what is set.
package final class FetcherHooks: Sendable {
    /// Called after an observer of the resource's events has been registered.
    package let observerRegistered = Locked<(@Sendable () -> Void)?>(nil)
    /// Awaited before the store entry a first response's bytes go into is
    /// prepared (a store slow to commit, as under another writer's `fsync`s).
    package let entryPreparation = Locked<(@Sendable () async -> Void)?>(nil)
    /// Awaited when a transfer fails, before its readers are told.
    package let transferFailure = Locked<(@Sendable () async -> Void)?>(nil)

    package init() {}
}

/// Points where a test sees a ``ResourceLoader``'s request tasks, injected
/// through ``StreamingConfiguration/loaderHooks``: none is set by default,
/// and a loader only calls what is set.
package final class LoaderHooks: Sendable {
    /// Called by ``ResourceLoader/shouldWaitForLoading(of:)`` once the
    /// request's task exists and is registered.
    package let taskCreated = Locked<(@Sendable (LoadingRequest) -> Void)?>(nil)
    /// Called by a request's task when it has ended and unregistered itself.
    package let taskEnded = Locked<(@Sendable (LoadingRequest) -> Void)?>(nil)

    package init() {}
}

/// Points where a test holds a ``StreamingItem``'s download runs, injected
/// through ``StreamingConfiguration/itemHooks``: none is set by default,
/// and an item only calls what is set.
package final class ItemHooks: Sendable {
    /// Awaited by a ``StreamingItem/download()`` run once its result is
    /// known, before it publishes it and lets go of its task.
    package let downloadEnd = Locked<(@Sendable () async -> Void)?>(nil)

    package init() {}
}

/// Points where a test holds an `HLSResourceStore` at work, injected
/// through ``StreamingConfiguration/resourceStoreHooks``: none is set by
/// default, and a store only awaits what is set.
package final class ResourceStoreHooks: Sendable {
    /// Awaited by `HLSResourceStore/data(for:metadata:pinned:headers:priority:store:)`
    /// once it found nothing stored, before it fetches or joins a fetch.
    package let storeLook = Locked<(@Sendable () async -> Void)?>(nil)
    /// Awaited, with the store key, before a download keeps (holds) a
    /// resource: a write with a holder, or a keep of an entry already stored.
    package let keep = Locked<(@Sendable (String) async -> Void)?>(nil)

    package init() {}
}
