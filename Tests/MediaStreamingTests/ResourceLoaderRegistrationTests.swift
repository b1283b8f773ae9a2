import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// A loading request's task is registered before it can finish or be
/// cancelled: a cancel right after ``ResourceLoader/shouldWaitForLoading(of:)``
/// started it stops it, and a task that ends at once leaves nothing behind.
@Suite("Resource loader registration", .timeLimit(.minutes(2)))
struct ResourceLoaderRegistrationTests {
    /// Calls `shouldWaitForLoading(of:)` on a thread of its own (the test hook may block it).
    func startOffPool(_ loader: ResourceLoader, _ request: LoadingRequest) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                loader.shouldWaitForLoading(of: request)
                continuation.resume()
            }.start()
        }
    }

    @Test func aTaskThatFinishesAtOnceLeavesNoRegistration() async throws {
        let test = try TestCache(origin: FakeOrigin(serving: Data(repeating: 7, count: 1000)))
        let loader = test.cache.loader(for: URL(string: "http://origin.invalid/a.bin")!)
        let request = LoadingRequest(contentInformation: true, offset: 0, length: 100) { _ in }
        let ended = DispatchSemaphore(value: 0)
        test.configuration.loaderHooks.taskEnded.withLock { $0 = { _ in ended.signal() } }
        // The task ends before shouldWaitForLoading goes on (40 s: a loaded machine is slow).
        test.configuration.loaderHooks.taskCreated.withLock { $0 = { _ in _ = ended.wait(timeout: .now() + 40) } }
        await startOffPool(loader, request)
        #expect(request.isFinished)
        for _ in 0..<200 where loader.registeredRequests != 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(loader.registeredRequests == 0, "the finished request stays registered")
    }

    @Test func aCancelRightAfterTheTaskStartsStopsIt() async throws {
        // 1 MiB in 8 KiB pieces 50 ms apart: it would take 6 s.
        let origin = FakeOrigin(serving: Data(repeating: 7, count: 1 << 20), pieceDelay: .milliseconds(50))
        let test = try TestCache(origin: origin)
        let loader = test.cache.loader(for: URL(string: "http://origin.invalid/b.bin")!)
        let request = LoadingRequest(contentInformation: true, offset: 0) { _ in }
        test.configuration.loaderHooks.taskCreated.withLock { $0 = { [weak loader] in loader?.didCancel($0) } }
        await startOffPool(loader, request)
        #expect(loader.registeredRequests == 0, "the cancelled request's task goes on")
        try await Task.sleep(for: .milliseconds(200))
        #expect(!request.isFinished)
        test.configuration.loaderHooks.taskCreated.withLock { $0 = nil }
    }
}
