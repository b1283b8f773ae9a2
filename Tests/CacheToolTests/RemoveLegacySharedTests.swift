import Foundation
import MediaHLS
import MediaStore
import MediaStreaming
import Testing

/// `cachetool rm` of an HLS asset in a store a version before holds wrote:
/// a resource another asset kept too (`hls.keepers` names both, and the
/// app's hold stands for them) stays for that asset, and is no longer
/// the removed one's: removing the other asset then removes it.
@Suite struct RemoveLegacySharedTests {
    @Test func aSharedLegacyResourceStaysForTheOtherAsset() async throws {
        let directory = try TemporaryDirectory("rm-legacy-shared")
        defer { directory.remove() }
        let path = directory.path("store")
        func legacy(_ keepers: String, kind: String) -> WriteOptions {
            WriteOptions(
                expiry: .never,
                metadata: EntryMetadata(userInfo: [HLSEntryMetadata.kind: kind, HLSEntryMetadata.keepers: keepers]),
                pinned: true)
        }
        let (a, b, shared) = ("policy:a/master", "policy:b/master", "policy:shared/0.ts")
        do {
            let store = try MediaStore(directory: URL(fileURLWithPath: path))
            for master in [a, b] {
                try store.put(Data("#EXTM3U\n".utf8), forKey: master, options: legacy(master, kind: "masterPlaylist"))
                try store.put(
                    Data(repeating: 2, count: 100), forKey: master + "/own.ts", options: legacy(master, kind: "segment")
                )
            }
            try store.put(
                Data(repeating: 1, count: 100), forKey: shared, options: legacy("\(a)\n\(b)", kind: "segment"))
        }

        let removedA = try await ToolProcess.cachetool(["-s", path, "rm", a])
        #expect(removedA.status == 0, "\(removedA.errors)")
        do {
            let store = try MediaStore(directory: URL(fileURLWithPath: path))
            #expect(try store.info(forKey: a) == nil && store.info(forKey: a + "/own.ts") == nil)
            let kept = try store.info(forKey: shared)
            #expect(kept != nil, "removing one asset removed a resource the other still keeps")
            #expect(kept.map { HLSEntryMetadata.keepers(of: $0.metadata.userInfo) } == [b])
        }
        let removedB = try await ToolProcess.cachetool(["-s", path, "rm", b])
        #expect(removedB.status == 0, "\(removedB.errors)")
        let store = try MediaStore(directory: URL(fileURLWithPath: path))
        #expect(try store.info(forKey: shared) == nil, "the last asset's removal left its resource")
        #expect(try store.info(forKey: b + "/own.ts") == nil)
    }
}
