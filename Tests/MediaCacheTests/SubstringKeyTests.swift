import Foundation
import Testing

@testable import MediaCache

/// Review: keys that are not `String` but compare by canonical equivalence
/// (`Substring`) still alias in the memory tier while the disk keeps them apart.
@Suite struct SubstringKeyTests {
    @Test func canonicallyEquivalentSubstringKeysStayApart() throws {
        let temp = ScratchDirectory()
        let storage = try Storage<Substring, Int>(
            diskConfig: DiskConfig(name: "Cache", directory: temp.url), memoryConfig: MemoryConfig(),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        let composed: Substring = "caf\u{E9}"
        let decomposed: Substring = "cafe\u{301}"
        try storage.setObject(1, forKey: composed)
        try storage.setObject(2, forKey: decomposed)
        #expect(try storage.hybridStorage.diskStorage.object(forKey: composed) == 1)
        #expect(try storage.object(forKey: composed) == 1)
        #expect(try storage.object(forKey: decomposed) == 2)
    }
}
