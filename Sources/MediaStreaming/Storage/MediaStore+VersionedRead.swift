import Foundation
import MediaStore

extension MediaStore {
    /// The bytes of `range` of version `version` of `key`'s entry
    /// (expired or not), read in one call: for a reader that reads a chunk
    /// per ``StoreIO`` call.
    ///
    /// - throws: ``StoreError/changedDuringRead(key:)`` when the entry is no
    ///   longer that version; the other errors of ``read(forKey:range:includeExpired:)``.
    func read(forKey key: String, range: Range<Int>, version: UInt64) throws(StoreError) -> Data {
        // A range within one chunk arrives as one piece: keep it as it
        // is (no copy); only a range over several chunks is joined.
        var bytes: Data?
        do {
            try read(forKey: key, range: range, includeExpired: true, version: version) { piece in
                if bytes == nil { bytes = piece } else { bytes!.append(piece) }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            // The handler above never throws: every error is the store's.
            throw .storage(code: -1, message: String(describing: error))
        }
        return bytes ?? Data()
    }

    /// The bytes of `range` of version `version` of `key`'s entry, one
    /// piece per chunk (each its own `Data`, none copied twice), read in
    /// one call: for a reader that moves several chunks per ``StoreIO`` call.
    ///
    /// - throws: as ``read(forKey:range:version:)``.
    func readPieces(forKey key: String, range: Range<Int>, version: UInt64) throws(StoreError) -> [Data] {
        var pieces: [Data] = []
        do {
            try read(forKey: key, range: range, includeExpired: true, version: version) { pieces.append($0) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .storage(code: -1, message: String(describing: error))
        }
        return pieces
    }
}
