import Foundation

extension MediaStore {
    enum CloseState: Sendable {
        case open
        case closing
        case closed
    }

    /// Whether ``close()`` has begun.
    var isClosed: Bool {
        closeStateValue != .open
    }

    /// Ends the store now, rather than when its last reference goes.
    ///
    /// Writes the batched access times, waits until the writer and every
    /// read under way in this process have finished, closes the LMDB
    /// environment, drops the maintenance lock and marks the session
    /// closed. A new ``MediaStore`` (or ``shared(directory:configuration:)``)
    /// on the same directory can open it as soon as this returns. Every
    /// later call on this store throws ``StoreError/closed``. Closing
    /// twice is harmless. Do not call it from inside a removal handler
    /// or while iterating a read of this store on the same thread: it
    /// waits for that read.
    ///
    /// Releasing the store (its last reference going) closes it the same way.
    public func close() {
        guard beginClosing() else { return }
        // A background flush under way holds the writer lock, which
        // finishClosing waits for; one not yet started finds the store closed.
        if !isReadOnly { try? flushAccessTimes() }
        finishClosing()
    }
}
