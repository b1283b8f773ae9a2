import Foundation
import MediaStore

/// `crash-writer app <storeDir> <close|hang>`: an app as the recovery
/// tests (issue 8, part 2) need one. Opens the store the way an app does,
/// prints one line (`opened entries=N unclean=N recovery=<reason or ->
/// copy=<path or ->`), reads every entry whole (which faults inside LMDB
/// on some damaged stores), prints `read N`, then either closes the store
/// and exits 0 (`close`) or waits to be killed (`hang`).
enum RecoveryApp {
    static func run(directory: String, mode: String) -> Int32 {
        let store: MediaStore
        do {
            store = try MediaStore(
                directory: URL(fileURLWithPath: directory), configuration: StoreConfiguration(initialMapSize: 64 << 20))
        } catch {
            say("refused \(error)")
            return 2
        }
        do {
            let entries = try store.entries()
            let recovery = store.recovery
            say(
                "opened entries=\(entries.count) unclean=\(store.uncleanSessions) "
                    + "recovery=\(recovery.map { $0.reason.replacingOccurrences(of: " ", with: "_") } ?? "-") "
                    + "copy=\(recovery?.damagedCopy.path ?? "-")")
            var bytes = 0
            for entry in entries where entry.isComplete { bytes += try store.data(forKey: entry.key)?.count ?? 0 }
            say("read \(bytes)")
        } catch {
            say("failed \(error)")
            return 3
        }
        if mode == "hang" {
            while true { sleep(60) }
        }
        store.close()
        return 0
    }

    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
