#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether LMDB's two meta pages are a store's last two commits.
///
/// LMDB writes commit N to meta page N % 2 and opens whichever page holds
/// the higher transaction id. Once anything is committed, the pages
/// therefore hold two consecutive ids, each on the page of its parity,
/// and the newer commit ends at or after the older one's last page (LMDB
/// 0.9 never gives pages back to the file). A fresh file holds id 0 on
/// both; a compacted copy 0 and 1.
///
/// Meta pages carry no checksum. A damaged id that climbs above the other
/// page's makes LMDB open the older commit: a consistent store that lacks
/// the last commit's writes, in which nothing read through LMDB looks
/// wrong (every record, chunk and counter agrees), so only comparing the
/// two pages shows it. The next commit then overwrites the newest one,
/// and the loss becomes permanent.
///
/// Not caught: an id damaged to exactly one above the other page's, with
/// the page's parity, when the last commit did not grow the file; the
/// pair then looks like two real commits.
///
/// Layout (64-bit LMDB 0.9): a 16-byte page header, then `MDB_meta`:
/// magic at 0, the free DB (its `md_pad` holds the page size) at 24,
/// `mm_last_pg` at 120, `mm_txnid` at 128.
package struct MetaPageCheck: Equatable {
    /// What one meta page says.
    package struct Meta: Equatable {
        package var txnid: UInt64
        package var lastPage: UInt64

        package init(txnid: UInt64, lastPage: UInt64) {
            self.txnid = txnid
            self.lastPage = lastPage
        }
    }

    /// Meta pages 0 and 1; `nil` for one without LMDB's magic.
    package let metas: (Meta?, Meta?)

    package init(_ first: Meta?, _ second: Meta?) {
        metas = (first, second)
    }

    package static func == (lhs: MetaPageCheck, rhs: MetaPageCheck) -> Bool {
        lhs.metas.0 == rhs.metas.0 && lhs.metas.1 == rhs.metas.1
    }

    /// Why the two pages cannot be the last two commits, or `nil` when they can.
    package var inconsistency: String? {
        guard let first = metas.0 else { return "meta page 0 is not an LMDB meta page" }
        guard let second = metas.1 else { return "meta page 1 is not an LMDB meta page" }
        if first.txnid == 0 && second.txnid == 0 { return nil }
        let (newerPage, newer, older) = second.txnid > first.txnid ? (1, second, first) : (0, first, second)
        let opens =
            "LMDB opens commit \(newer.txnid) (page \(newerPage)), which may be an older state "
            + "without the last writes"
        if newer.txnid - older.txnid != 1 || newer.txnid & 1 != UInt64(newerPage) {
            return "LMDB's meta pages are damaged: page 0 holds commit \(first.txnid) and page 1 commit "
                + "\(second.txnid), but commit N is written to page N % 2 and the two are consecutive; " + opens
        }
        if newer.lastPage < older.lastPage {
            return "LMDB's meta pages are damaged: commit \(newer.txnid) (page \(newerPage)) ends at page "
                + "\(newer.lastPage), before commit \(older.txnid) (page \(1 - newerPage)) at page "
                + "\(older.lastPage), and LMDB never gives pages back; " + opens
        }
        return nil
    }

    /// Reads both meta pages of the LMDB file at `path` with plain reads.
    /// `nil` when the file cannot be read (opening and the rest of
    /// ``MediaStore/verify()`` report that).
    package static func read(path: String) -> MetaPageCheck? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        func bytes(at offset: Int, _ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done))
                }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return nil }
                done += got
            }
            return bytes
        }
        func load(_ bytes: [UInt8], _ offset: Int, _ size: Int) -> UInt64 {
            (0..<size).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        let metaSize = 16 + 136
        guard let first = bytes(at: 0, metaSize) else { return nil }
        let pageSize = Int(load(first, 16 + 24, 4))
        guard pageSize >= 512, pageSize <= 65536, pageSize.nonzeroBitCount == 1,
            let second = bytes(at: pageSize, metaSize)
        else { return MetaPageCheck(nil, nil) }
        func meta(_ page: [UInt8]) -> Meta? {
            guard load(page, 16, 4) == 0xBEEF_C0DE else { return nil }
            return Meta(txnid: load(page, 16 + 128, 8), lastPage: load(page, 16 + 120, 8))
        }
        return MetaPageCheck(meta(first), meta(second))
    }

    /// Why the meta pages of the LMDB file at `path` cannot be its last
    /// two commits, or `nil` when they can (or the file cannot be read).
    ///
    /// Another process may commit while the pages are read: a commit
    /// rewrites one page, so the pages are judged only once two reads in
    /// a row agree (then at most one commit fell between the two pages'
    /// reads, and a real pair still looks consecutive). When writers never
    /// pause long enough, nothing is judged (`nil`).
    package static func damage(path: String, attempts: Int = 16) -> String? {
        var previous = read(path: path)
        for _ in 0..<attempts {
            guard let pages = previous else { return nil }
            let again = read(path: path)
            if again == pages { return pages.inconsistency }
            previous = again
        }
        return nil
    }
}
