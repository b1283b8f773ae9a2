import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// A directory this process has open already is refused at once, and the
/// refusal leaves the open store alone.
@Suite struct OpenTwiceTests {
    @Test func anOpenOfADirectoryThisProcessHasOpenIsRefusedAtOnce() throws {
        let directory = temporaryPath("open-twice")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(directory: directory)
        try store.put(Data([7]), forKey: "key")
        // The fastest of three: the session probe would first wait 63 ms
        // for the open store's maintenance lock.
        var fastest = Duration.seconds(60)
        for _ in 0..<3 {
            let elapsed = ContinuousClock().measure {
                #expect(throws: StoreError.alreadyOpen(path: directory.path)) {
                    _ = try MediaStore(directory: directory)
                }
            }
            fastest = min(fastest, elapsed)
        }
        #expect(fastest < .milliseconds(30), "a refused open took \(fastest)")
        // The refused opens left the open store and its session alone.
        #expect(try store.data(forKey: "key") == Data([7]))
        store.close()
        let marker = try String(contentsOf: directory.appendingPathComponent(StoreSession.fileName), encoding: .utf8)
        #expect(StoreSession.Record(text: marker)?.isOpen == false, "\(marker)")
        let reopened = try MediaStore(directory: directory)
        #expect(reopened.uncleanSessions == 0)
        reopened.close()
    }
}
