import Foundation
import MediaStore
import MediaSupport

/// `cachetool rekey`: re-encrypts an encrypted store under a new key.
extension CacheTool {
    func rekey(_ parsed: ParsedArguments) throws {
        guard parsed.value("key-file") != nil else {
            throw UsageError("rekey needs the store's key: --key-file PATH", command: "rekey")
        }
        guard let newPath = parsed.value("new-key-file") else {
            throw UsageError("rekey needs the new key: --new-key-file PATH", command: "rekey")
        }
        let newKey: StoreKey
        do {
            newKey = try KeyFile.read(from: newPath)
        } catch {
            throw ToolError("--new-key-file: \(error)")
        }
        let store = try openStore(parsed, write: true)
        defer { store.close() }
        console.progress("rekeying \(store.directory.path) ...")
        let outcome = BlockingWait { () async throws(any Error) -> RekeyProgress in
            try await store.rekey(to: newKey)
        }.wait()
        console.endProgress()
        guard let outcome else { throw ToolError("the rekey was abandoned") }
        let progress = try outcome.get()
        if parsed.flag("json") {
            printJSON(
                "rekey",
                [
                    ("store", .string(store.directory.path)), ("steps", .int(progress.steps)),
                    ("entriesMoved", .int(progress.entriesMoved)), ("chunksResealed", .int(progress.chunksResealed)),
                    ("entriesDropped", .int(progress.entriesDropped)),
                ])
        } else {
            console.print(
                "rekeyed: \(progress.entriesMoved) entries, \(progress.chunksResealed) chunks sealed again"
                    + (progress.entriesDropped > 0 ? ", \(progress.entriesDropped) corrupt entries dropped" : ""))
        }
    }
}
