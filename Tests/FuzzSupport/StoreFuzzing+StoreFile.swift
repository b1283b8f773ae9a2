import Foundation
import MediaStore

/// Entry points for the libFuzzer target `FuzzStoreFile`: arbitrary bytes
/// as a store's `data.mdb`.
///
/// LMDB trusts its file, so only the checks made before LMDB maps it
/// (``StoreFormat/looksLikeLMDB(path:)`` and the meta-page check) are
/// safe to run on any input in-process; ``openStoreFile(_:directory:)``
/// may fault inside LMDB and belongs in a child process.
extension StoreFuzzing {
    /// What the checks before mapping say about a file.
    public enum StoreFileVerdict: Sendable, Equatable {
        /// An empty file: what a crash during the very first open leaves;
        /// a read-write open initialises it as a new store.
        case empty
        /// Not an LMDB file (too short, wrong magic or version): refused as `notAStore`.
        case notLMDB
        /// Meta pages that do not describe the file: refused as `damagedStore`
        /// by a read-only open; a read-write open moves it aside and starts empty.
        case damaged
        /// LMDB will map it.
        case passes
    }

    /// Writes `bytes` as `directory/data.mdb` (creating the directory and
    /// removing any lock files a previous input left) and runs the checks
    /// opening makes before LMDB maps the file. They must never crash,
    /// and must agree with the bytes: a file passes only with LMDB's magic
    /// and version at offset 16.
    @discardableResult
    public static func checkStoreFile(_ bytes: [UInt8], directory: URL) throws(FuzzFailure) -> StoreFileVerdict {
        let path = directory.appendingPathComponent("data.mdb").path
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in [StoreOpener.lockFileName, ".maintenance-lock", StoreSession.fileName]
            + StoreOpener.damagedCopies(in: directory)
        {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw FuzzFailure("cannot write \(path)")
        }
        if bytes.isEmpty { return .empty }
        guard StoreFormat.looksLikeLMDB(path: path) else { return .notLMDB }
        try fuzzCheck(
            bytes.count >= 24 && bytes[16..<24] == [0xDE, 0xC0, 0xEF, 0xBE, 1, 0, 0, 0],
            "not LMDB's magic passed the check")
        guard StoreFormat.metaPageDamage(path: path) == nil else { return .damaged }
        // The walk after an unclean session and verify's meta-page check read
        // any file with plain reads: they must never crash.
        _ = StoreFileCheck.damage(path: path)
        _ = MetaPageCheck.damage(path: path)
        return .passes
    }

    /// Opens the store in `directory` the way `cachetool` does (read-only)
    /// and the way an app does (read-write), and walks whatever opens:
    /// statistics, entries, every complete entry's bytes, `verify()`.
    /// Returns a one-line outcome. Every failure must be a typed
    /// ``StoreError``; a file refused by ``checkStoreFile(_:directory:)``
    /// must be refused here too. May fault inside LMDB for a file that
    /// passes the checks: run it in a child process.
    @discardableResult
    public static func openStoreFile(verdict: StoreFileVerdict, directory: URL) throws(FuzzFailure) -> String {
        var outcomes: [String] = []
        for readOnly in [true, false] {
            let opened: Result<MediaStore, StoreError>
            do throws(StoreError) {
                opened = .success(
                    readOnly
                        ? try MediaStore.openReadOnly(directory: directory)
                        : try MediaStore(
                            directory: directory, configuration: StoreConfiguration(initialMapSize: 1 << 20)))
            } catch {
                opened = .failure(error)
            }
            switch opened {
            case .success(let store):
                guard
                    verdict == .passes || (verdict == .empty && !readOnly)
                        || (verdict == .damaged && !readOnly && store.recovery != nil)
                else {
                    throw FuzzFailure("a file the checks refuse (\(verdict)) opened")
                }
                outcomes.append("opened: " + walk(store))
            case .failure(let error):
                switch (verdict, error) {
                case (.notLMDB, .notAStore), (.empty, .notAStore), (.damaged, .damagedStore), (.passes, _): break
                default: throw FuzzFailure("the checks said \(verdict), opening threw \(error)")
                }
                outcomes.append("refused: \(error)")
            }
        }
        return outcomes.joined(separator: "; ")
    }

    /// Reads everything a store offers; returns a short summary.
    private static func walk(_ store: MediaStore) -> String {
        do throws(StoreError) {
            let statistics = try store.statistics()
            let entries = try store.entries()
            for info in entries.prefix(64) where info.isComplete {
                _ = try? store.data(forKey: info.key)
                _ = try? store.cachedRanges(forKey: info.key)
            }
            let report = try store.verify()
            return "\(statistics.entryCount) entries, \(report.isClean ? "clean" : "\(report.problems.count) problems")"
        } catch {
            return "error while reading: \(error)"
        }
    }
}
