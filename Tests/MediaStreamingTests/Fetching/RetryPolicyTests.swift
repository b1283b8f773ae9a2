import Foundation
import Testing

@testable import MediaStreaming

/// The one retry policy of transfers and HLS resource fetches, on its own: no network.
@Suite("Retry policy")
struct RetryPolicyTests {
    static let url = URL(string: "https://origin.example/a.ts")!

    @Test("Waits double from the initial backoff and stop at the cap")
    func delaysDoubleUpToTheCap() {
        let policy = RetryPolicy(maxRetries: 8, initialBackoff: .milliseconds(50), maxBackoff: .seconds(2))
        let delays = (1...8).map { policy.delay(beforeRetry: $0) }
        let expected: [Duration] = [50, 100, 200, 400, 800, 1600, 2000, 2000].map { .milliseconds($0) }
        #expect(delays == expected)
    }

    @Test("No wait past maxRetries, nor before the first retry")
    func retriesAreCounted() {
        let policy = RetryPolicy(maxRetries: 2)
        #expect(policy.delay(beforeRetry: 0) == nil)
        #expect(policy.delay(beforeRetry: 1) == .milliseconds(50))
        #expect(policy.delay(beforeRetry: 2) == .milliseconds(100))
        #expect(policy.delay(beforeRetry: 3) == nil)
        #expect(RetryPolicy.never.delay(beforeRetry: 1) == nil)
    }

    @Test("A huge retry count stays finite and capped")
    func largeCountsAreCapped() {
        let policy = RetryPolicy(maxRetries: .max, initialBackoff: .seconds(1), maxBackoff: .seconds(3))
        #expect(policy.delay(beforeRetry: 1_000_000) == .seconds(3))
    }

    @Test("A backoff too long to double many times reaches the cap instead of overflowing")
    func longBackoffsDoNotOverflow() {
        let policy = RetryPolicy(
            maxRetries: 40, initialBackoff: .seconds(Int64.max / 4), maxBackoff: .seconds(Int64.max / 2))
        #expect(policy.delay(beforeRetry: 1) == .seconds(Int64.max / 4))
        #expect(policy.delay(beforeRetry: 30) == .seconds(Int64.max / 2))
        let zero = RetryPolicy(maxRetries: .max, initialBackoff: .zero)
        #expect(zero.delay(beforeRetry: 1_000_000) == .zero)
    }

    @Test("Negative settings are clamped to none")
    func negativeSettingsAreClamped() {
        let policy = RetryPolicy(maxRetries: -1, initialBackoff: .seconds(-1), maxBackoff: .seconds(-1))
        #expect(policy.maxRetries == 0)
        #expect(policy.initialBackoff == .zero)
        #expect(policy.maxBackoff == .zero)
    }

    @Test("Transient origin failures are retried; refusals, store failures and cancellation are not")
    func whichErrorsAreTransient() {
        let policy = RetryPolicy(maxRetries: 1)
        let transient: [StreamingError] = [
            .origin(.connectionLost(reason: "reset")), .origin(.stalled(seconds: 1)),
            .origin(.truncated(expected: 10, received: 5)), .origin(.httpStatus(code: 503, url: Self.url)),
            .origin(.httpStatus(code: 429, url: Self.url)), .origin(.httpStatus(code: 408, url: Self.url)),
        ]
        let final: [StreamingError] = [
            .origin(.httpStatus(code: 404, url: Self.url)),
            .origin(.contentRangeMismatch(requested: "bytes=0-9", received: "none")),
            .resourceChanged(url: Self.url), .cancelled, .notCacheable(reason: "test"),
        ]
        for error in transient {
            #expect(RetryPolicy.isTransient(error), "\(error)")
            #expect(policy.delay(after: error, retry: 1) == .milliseconds(50), "\(error)")
            #expect(policy.delay(after: error, retry: 2) == nil, "\(error)")
        }
        for error in final {
            #expect(!RetryPolicy.isTransient(error), "\(error)")
            #expect(policy.delay(after: error, retry: 1) == nil, "\(error)")
        }
    }
}
