import Foundation

/// A check of LMDB's two meta pages before the file is mapped.
///
/// LMDB trusts its file: a `data.mdb` shorter than its last commit says
/// (a truncated copy, a disk that lost the tail) makes it read past the
/// end of the map and die with SIGBUS. Reading the meta pages first turns
/// that into ``StoreError/damagedStore(reason:)``.
extension StoreFormat {
    /// Why the meta pages of `path` do not describe a whole LMDB file,
    /// or `nil` when they do (or the file cannot be read: opening reports that).
    ///
    /// Layout (64-bit LMDB 0.9): a 16-byte page header, then `MDB_meta`:
    /// magic at 0, version at 4, the free DB (its `md_pad` holds the page
    /// size) at 24, `mm_last_pg` at 120 and `mm_txnid` at 128.
    package static func metaPageDamage(path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), (try? handle.seek(toOffset: 0)) != nil,
            let first = try? handle.read(upToCount: 4096 + 160)
        else { return nil }
        func field<T: FixedWidthInteger>(_ bytes: Data, _ offset: Int, _: T.Type) -> T? {
            guard offset + MemoryLayout<T>.size <= bytes.count else { return nil }
            let start = bytes.startIndex + offset
            return bytes[start..<start + MemoryLayout<T>.size].withUnsafeBytes {
                T(littleEndian: $0.loadUnaligned(as: T.self))
            }
        }
        guard let pageSize = field(first, 16 + 24, UInt32.self), pageSize >= 512, pageSize <= 65536,
            pageSize.nonzeroBitCount == 1
        else { return "meta page 0 has no valid page size" }
        var metas = [first.prefix(Int(pageSize))]
        if Int(pageSize) + 160 > first.count {
            try? handle.seek(toOffset: UInt64(pageSize))
            metas.append((try? handle.read(upToCount: 160)) ?? Data())
        } else {
            metas.append(first.dropFirst(Int(pageSize)))
        }
        var newest: (txnid: UInt64, lastPage: UInt64)?
        for meta in metas {
            guard field(meta, 16, UInt32.self) == 0xBEEF_C0DE, let lastPage = field(meta, 16 + 120, UInt64.self),
                let txnid = field(meta, 16 + 128, UInt64.self)
            else { continue }
            if newest == nil || txnid > newest!.txnid { newest = (txnid, lastPage) }
        }
        guard let newest else { return "neither meta page is valid" }
        let (needed, overflow) = (newest.lastPage &+ 1).multipliedReportingOverflow(by: UInt64(pageSize))
        if overflow || needed > size {
            return "data.mdb is truncated or its meta page is damaged: \(size) bytes, but commit \(newest.txnid) "
                + "uses \(overflow ? "more than the address space" : "\(needed) bytes")"
        }
        return nil
    }
}
