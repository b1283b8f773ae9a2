#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A structural walk of an LMDB file's B-trees with plain reads, never
/// through LMDB's map, so that no damage can make it fault.
///
/// LMDB pages carry no checksums, and LMDB follows whatever page numbers,
/// offsets and sizes it finds: a damaged page can make it read outside
/// its map (SIGSEGV, SIGBUS) inside the app. This walk reads the newest
/// meta page, then every branch and leaf page of the free-page database,
/// the main database and each named database, and checks what LMDB would
/// follow: page numbers within the last commit (`mm_last_pg`) and the
/// file, each page reached once, its header (number, kind, bounds), every
/// node inside its page, every overflow value's pages within the file and
/// its first page's header, the free list's page numbers, and each tree's
/// depth and page and entry counts against its `MDB_db` record.
///
/// It reads branch and leaf pages plus one 16-byte header per overflow
/// value, not the values themselves: its cost follows the index, not the
/// cached bytes. It does not check key order or the values' contents
/// (chunks have their own checksums; ``MediaStore/verify()`` reads them).
///
/// Layout (64-bit LMDB 0.9): a page is a 16-byte header (`pgno` at 0,
/// flags at 10, `lower`/`upper` at 12/14, or the overflow page count at
/// 12) followed by 2-byte node offsets; a node is 8 bytes (data size or
/// child page in `lo`, `hi`, `flags`; key size) then the key and data.
package struct StoreFileCheck {
    /// The page size the meta page records.
    let pageSize: Int
    /// `mm_last_pg` of the newest commit.
    let lastPage: UInt64
    /// Reads `count` bytes at `offset`; `nil` when the file ends first.
    let read: (_ offset: UInt64, _ count: Int) -> [UInt8]?

    /// An `MDB_db` record: a tree's root and the counts LMDB keeps for it.
    struct Tree {
        var flags: UInt16
        var depth: UInt16
        var branchPages: UInt64
        var leafPages: UInt64
        var overflowPages: UInt64
        var entries: UInt64
        var root: UInt64

        init(_ bytes: ArraySlice<UInt8>) {
            flags = bytes.loadLittleEndian(at: 4)
            depth = bytes.loadLittleEndian(at: 6)
            branchPages = bytes.loadLittleEndian(at: 8)
            leafPages = bytes.loadLittleEndian(at: 16)
            overflowPages = bytes.loadLittleEndian(at: 24)
            entries = bytes.loadLittleEndian(at: 32)
            root = bytes.loadLittleEndian(at: 40)
        }
    }

    /// Damage found, as one sentence; `notOurs` ends the walk without a
    /// verdict (a foreign LMDB file: opening refuses it as not a store).
    enum Finding: Error {
        case damage(String)
        case notOurs
    }

    private static let pageHeaderSize = 16
    private static let nodeHeaderSize = 8
    private static let invalidPage = UInt64.max
    private static let (branchFlag, leafFlag, overflowFlag): (UInt16, UInt16, UInt16) = (0x01, 0x02, 0x04)
    /// Page kinds: branch, leaf, overflow, meta, LEAF2, sub-page.
    private static let kindMask: UInt16 = 0x6F
    private static let (bigData, subData, dupData): (UInt16, UInt16, UInt16) = (0x01, 0x02, 0x04)

    /// Why the file at `path` cannot be trusted, or `nil` when the walk
    /// finds nothing (or the file is not a store of ours, or cannot be
    /// read: opening reports those).
    package static func damage(path: String, namedDatabases: Set<String> = Set(StoreDatabases.names)) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return damage(namedDatabases: namedDatabases) { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return nil }
                done += got
            }
            return bytes
        }
    }

    /// The walk over any byte source (unit tests and the fuzz target use
    /// an array).
    static func damage(
        namedDatabases: Set<String> = Set(StoreDatabases.names),
        read: @escaping (_ offset: UInt64, _ count: Int) -> [UInt8]?
    ) -> String? {
        // The newest valid meta page, as LMDB picks it.
        guard let head = read(0, 16 + 160) else { return nil }
        let pageSize = Int(head[...].loadLittleEndian(at: 16 + 24) as UInt32)
        guard pageSize >= 512, pageSize <= 65536, pageSize.nonzeroBitCount == 1 else {
            return "meta page 0 has no valid page size"
        }
        var newest: (txnid: UInt64, meta: [UInt8])?
        for page in 0..<2 {
            guard let meta = read(UInt64(page * pageSize), 16 + 136),
                (meta[...].loadLittleEndian(at: 16) as UInt32) == 0xBEEF_C0DE
            else { continue }
            let txnid: UInt64 = meta[...].loadLittleEndian(at: 16 + 128)
            if newest == nil || txnid > newest!.txnid { newest = (txnid, meta) }
        }
        guard let meta = newest?.meta[16...] else { return "neither meta page is valid" }
        let lastPage: UInt64 = meta.loadLittleEndian(at: 120)
        guard lastPage < UInt64.max / UInt64(pageSize) else { return "the last commit uses page \(lastPage)" }
        let check = StoreFileCheck(
            pageSize: pageSize, lastPage: lastPage, read: read)
        var walk = Walk()
        do {
            try check.walk(
                Tree(meta.dropFirst(24)), name: "the free-page database", kind: .freeList, &walk)
            try check.walk(
                Tree(meta.dropFirst(72)), name: "the main database",
                kind: .main(namedDatabases), &walk)
            for (name, tree) in walk.named { try check.walk(tree, name: "database \(name)", kind: .plain, &walk) }
            return nil
        } catch {
            switch error {
            case .damage(let reason): return reason
            case .notOurs: return nil
            }
        }
    }

    private enum Kind {
        case freeList
        case main(Set<String>)
        case plain
    }

    private struct Walk {
        var visited = Set<UInt64>()
        var named: [(String, Tree)] = []
        var branchPages: UInt64 = 0
        var leafPages: UInt64 = 0
        var overflowPages: UInt64 = 0
        var entries: UInt64 = 0
    }

    private func walk(_ tree: Tree, name: String, kind: Kind, _ walk: inout Walk) throws(Finding) {
        // Ours are plain databases (the free list is LMDB's, keyed by integers).
        if case .freeList = kind {} else if tree.flags != 0 { throw .notOurs }
        if tree.root == Self.invalidPage {
            guard tree.depth == 0, tree.entries == 0, tree.branchPages == 0, tree.leafPages == 0 else {
                throw .damage("\(name) has no root page but records \(tree.entries) entries")
            }
            if case .main = kind { throw .notOurs }
            return
        }
        guard tree.depth >= 1, tree.depth <= 64 else { throw .damage("\(name) records a depth of \(tree.depth)") }
        var counts = Walk()
        counts.visited = walk.visited
        try page(tree.root, level: 1, depth: Int(tree.depth), name: name, kind: kind, &counts)
        walk.visited = counts.visited
        walk.named += counts.named
        let found = (counts.branchPages, counts.leafPages, counts.overflowPages, counts.entries)
        let recorded = (tree.branchPages, tree.leafPages, tree.overflowPages, tree.entries)
        guard found == recorded else {
            throw .damage(
                "\(name) records \(recorded.0) branch, \(recorded.1) leaf and \(recorded.2) overflow pages and "
                    + "\(recorded.3) entries, but its tree has \(found.0), \(found.1), \(found.2) and \(found.3)")
        }
    }

    private func page(
        _ number: UInt64, level: Int, depth: Int, name: String, kind: Kind, _ walk: inout Walk
    ) throws(Finding) {
        guard number >= 2, number <= lastPage else {
            throw .damage("\(name) points to page \(number), outside pages 2...\(lastPage) of the last commit")
        }
        guard walk.visited.insert(number).inserted else { throw .damage("\(name) reaches page \(number) twice") }
        guard let bytes = read(number * UInt64(pageSize), pageSize) else {
            throw .damage("page \(number) of \(name) lies beyond the end of the file")
        }
        let page = bytes[...]
        let isLeaf = level == depth
        let expected = isLeaf ? Self.leafFlag : Self.branchFlag
        let header: UInt64 = page.loadLittleEndian(at: 0)
        let flags: UInt16 = page.loadLittleEndian(at: 10)
        guard header == number, flags & Self.kindMask == expected else {
            throw .damage(
                "page \(number) of \(name) is not the \(isLeaf ? "leaf" : "branch") page expected "
                    + "(it says page \(header), flags 0x\(String(flags, radix: 16)))")
        }
        let lower = Int(page.loadLittleEndian(at: 12) as UInt16)
        let upper = Int(page.loadLittleEndian(at: 14) as UInt16)
        guard lower >= Self.pageHeaderSize, lower <= upper, upper <= pageSize, lower % 2 == 0 else {
            throw .damage("page \(number) of \(name) has bounds \(lower)...\(upper)")
        }
        let count = (lower - Self.pageHeaderSize) / 2
        if isLeaf {
            walk.leafPages += 1
            walk.entries += UInt64(count)
        } else {
            walk.branchPages += 1
            guard count >= 1 else { throw .damage("branch page \(number) of \(name) is empty") }
        }
        for index in 0..<count {
            let offset = Int(page.loadLittleEndian(at: Self.pageHeaderSize + 2 * index) as UInt16)
            guard offset >= upper, offset + Self.nodeHeaderSize <= pageSize else {
                throw .damage("node \(index) of page \(number) (\(name)) lies at \(offset), outside the page")
            }
            let low = UInt64(page.loadLittleEndian(at: offset) as UInt16)
            let high = UInt64(page.loadLittleEndian(at: offset + 2) as UInt16)
            let nodeFlags: UInt16 = page.loadLittleEndian(at: offset + 4)
            let keySize = Int(page.loadLittleEndian(at: offset + 6) as UInt16)
            let keyStart = offset + Self.nodeHeaderSize
            guard keyStart + keySize <= pageSize else {
                throw .damage("the key of node \(index) of page \(number) (\(name)) runs past the page")
            }
            if !isLeaf {
                let child = low | high << 16 | UInt64(nodeFlags) << 32
                try self.page(child, level: level + 1, depth: depth, name: name, kind: kind, &walk)
                continue
            }
            let dataSize = low | high << 16
            let dataStart = keyStart + keySize
            if nodeFlags & Self.dupData != 0 { throw .notOurs }
            if nodeFlags & Self.bigData != 0 {
                guard dataStart + 8 <= pageSize else {
                    throw .damage("node \(index) of page \(number) (\(name)) runs past the page")
                }
                try overflow(page.loadLittleEndian(at: dataStart), size: dataSize, name: name, &walk)
                continue
            }
            guard UInt64(dataStart) + dataSize <= UInt64(pageSize) else {
                throw .damage(
                    "node \(index) of page \(number) (\(name)) holds \(dataSize) bytes, more than its page has")
            }
            let data = page[dataStart..<dataStart + Int(dataSize)]
            switch kind {
            case .freeList:
                try freePages(data, name: name)
            case .main(let names):
                guard nodeFlags & Self.subData != 0 else { throw .notOurs }
                let key = String(decoding: page[keyStart..<dataStart], as: UTF8.self)
                guard names.contains(key), dataSize == 48 else { throw .notOurs }
                walk.named.append((key, Tree(data)))
            case .plain:
                guard nodeFlags & Self.subData == 0 else { throw .notOurs }
            }
        }
    }

    /// An overflow value: its pages within the commit, its first page's header.
    private func overflow(_ first: UInt64, size: UInt64, name: String, _ walk: inout Walk) throws(Finding) {
        let pages = (UInt64(Self.pageHeaderSize) - 1 + size) / UInt64(pageSize) + 1
        guard first >= 2, first <= lastPage, lastPage - first >= pages - 1 else {
            throw .damage(
                "a \(size)-byte value of \(name) points to pages \(first)..<\(first &+ pages), "
                    + "outside pages 2...\(lastPage) of the last commit")
        }
        guard walk.visited.insert(first).inserted else { throw .damage("\(name) reaches page \(first) twice") }
        guard let header = read(first * UInt64(pageSize), Self.pageHeaderSize),
            read((first + pages) * UInt64(pageSize) - 1, 1) != nil
        else { throw .damage("a value of \(name) at page \(first) lies beyond the end of the file") }
        let number: UInt64 = header[...].loadLittleEndian(at: 0)
        let flags: UInt16 = header[...].loadLittleEndian(at: 10)
        let count: UInt32 = header[...].loadLittleEndian(at: 12)
        guard number == first, flags & Self.kindMask == Self.overflowFlag, UInt64(count) == pages else {
            throw .damage(
                "overflow page \(first) of \(name) says page \(number), flags 0x\(String(flags, radix: 16)), "
                    + "\(count) pages; its \(size)-byte value needs \(pages)")
        }
        walk.overflowPages += pages
    }

    /// A free-list record: a count, then that many page numbers.
    private func freePages(_ data: ArraySlice<UInt8>, name: String) throws(Finding) {
        guard data.count >= 8, data.count % 8 == 0 else { throw .damage("a record of \(name) is \(data.count) bytes") }
        let count: UInt64 = data.loadLittleEndian(at: 0)
        guard count == UInt64(data.count / 8 - 1) else {
            throw .damage("a record of \(name) lists \(count) pages in \(data.count) bytes")
        }
        for index in 1..<data.count / 8 {
            let page: UInt64 = data.loadLittleEndian(at: 8 * index)
            guard page >= 2, page <= lastPage else {
                throw .damage("\(name) lists page \(page), outside pages 2...\(lastPage) of the last commit")
            }
        }
    }
}

extension ArraySlice<UInt8> {
    /// The little-endian integer `offset` bytes after the slice's start
    /// (callers check the bounds).
    fileprivate func loadLittleEndian<T: FixedWidthInteger>(at offset: Int) -> T {
        let start = startIndex + offset
        return self[start..<start + MemoryLayout<T>.size].withUnsafeBytes {
            T(littleEndian: $0.loadUnaligned(as: T.self))
        }
    }
}
