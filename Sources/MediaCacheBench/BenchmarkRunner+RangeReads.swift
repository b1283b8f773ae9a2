import CLMDB
import Foundation
import MediaStore

extension BenchmarkRunner {
    /// 64 KiB reads at random offsets of one 256 MiB entry: the engine's
    /// `read(forKey:range:)`; raw-lmdb holding the entry as 256 KiB chunk
    /// items keyed by index and copying out of the chunks a read needs;
    /// file-per-key seeking and reading an open `FileHandle`.
    func runRangeReads() throws {
        let w = workloads
        let entrySize = Workloads.describe(bytes: w.rangeEntryBytes)
        let readSize = Workloads.describe(bytes: w.rangeReadSize)
        log("\(readSize) range reads of a \(entrySize) entry")
        let key = "https://media.example.com/v1/films/feature.bin"
        let entry = w.rangeEntry()

        let engineDirectory = try freshDirectory("engine-range")
        let rawDirectory = try freshDirectory("raw-range")
        let fileDirectory = try freshDirectory("file-range")
        defer {
            remove(engineDirectory)
            remove(rawDirectory)
            remove(fileDirectory)
        }
        var store = try MediaStore(directory: engineDirectory)
        let engineWrite = try Stopwatch.time { try store.put(entry, forKey: key) }
        let rawPath = rawDirectory.appendingPathComponent("data.mdb").path
        // Optional so that a reopen closes the environment first (LMDB: one
        // environment per file and process).
        var raw: RawLMDBBaseline! = try RawLMDBBaseline(path: rawPath)
        let chunksPerCommit = max(1, w.streamCommitBytes / w.rawChunkSize)
        let chunkCount = (w.rangeEntryBytes + w.rawChunkSize - 1) / w.rawChunkSize
        let rawWrite = try Stopwatch.time {
            for first in stride(from: 0, to: chunkCount, by: chunksPerCommit) {
                try raw.write { txn in
                    for index in first..<min(first + chunksPerCommit, chunkCount) {
                        let start = index * w.rawChunkSize
                        let chunk = entry[start..<min(start + w.rawChunkSize, entry.count)]
                        try txn.put(chunk, forKey: RawLMDBBaseline.chunkKey(entry: 1, index: index))
                    }
                }
            }
        }
        let files = try FilePerKeyBaseline(directory: fileDirectory)
        let fileWrite = try Stopwatch.time { try files.set(entry, forKey: key) }
        log(
            String(
                format: "  wrote the %@ entry: engine put %.2f s, raw-lmdb %.2f s, file-per-key %.2f s",
                entrySize, engineWrite, rawWrite, fileWrite))

        // Each repetition reopens the engine's store, so its first reads
        // find nothing verified in this process (cold), then reads the
        // whole entry once and times reads at other offsets (warm).
        var engineCold: [Double] = []
        var rawCold: [Double] = []
        var engineReads: [Double] = []
        var rawReads: [Double] = []
        var fileReads: [Double] = []
        let length = w.rangeReadSize
        for repetition in 0..<w.repetitions {
            store.close()
            store = try MediaStore(directory: engineDirectory)
            let coldOffsets = w.rangeOffsets(repetition: repetition + 10)
            // raw-lmdb reopened too, so that both pay for mapping the pages
            // they touch first (page faults) and only verifying differs.
            raw = nil
            raw = try RawLMDBBaseline(path: rawPath)
            var rawColdBytes = 0
            rawCold.append(
                Double(coldOffsets.count)
                    / (try Stopwatch.time {
                        for offset in coldOffsets {
                            rawColdBytes +=
                                try Self.rawRead(raw, offset: offset, length: length, chunkSize: w.rawChunkSize).count
                        }
                    }))
            var coldBytes = 0
            engineCold.append(
                Double(coldOffsets.count)
                    / (try Stopwatch.time {
                        for offset in coldOffsets {
                            coldBytes += try store.read(forKey: key, range: offset..<offset + length).count
                        }
                    }))
            try store.read(forKey: key, range: 0..<w.rangeEntryBytes) { _ in }
            let offsets = w.rangeOffsets(repetition: repetition)
            var engineBytes = 0
            var rawBytes = 0
            var fileBytes = 0
            engineReads.append(
                Double(offsets.count)
                    / (try Stopwatch.time {
                        for offset in offsets {
                            engineBytes += try store.read(forKey: key, range: offset..<offset + length).count
                        }
                    }))
            rawReads.append(
                Double(offsets.count)
                    / (try Stopwatch.time {
                        for offset in offsets {
                            rawBytes += try Self.rawRead(raw, offset: offset, length: length, chunkSize: w.rawChunkSize)
                                .count
                        }
                    }))
            let handle = try FileHandle(forReadingFrom: files.url(forKey: key))
            fileReads.append(
                Double(offsets.count)
                    / (try Stopwatch.time {
                        for offset in offsets {
                            try handle.seek(toOffset: UInt64(offset))
                            fileBytes += try handle.read(upToCount: length)?.count ?? 0
                        }
                    }))
            try handle.close()
            let expected = offsets.count * length
            verify(coldBytes == expected, "engine range reads (cold): \(coldBytes) bytes, expected \(expected)")
            verify(rawColdBytes == expected, "raw-lmdb range reads (cold): \(rawColdBytes) bytes, expected \(expected)")
            verify(engineBytes == expected, "engine range reads: \(engineBytes) bytes, expected \(expected)")
            verify(rawBytes == expected, "raw-lmdb range reads: \(rawBytes) bytes, expected \(expected)")
            verify(fileBytes == expected, "file-per-key range reads: \(fileBytes) bytes, expected \(expected)")
        }
        record(
            "\(readSize) range read at random offsets of a \(entrySize) entry (\(Workloads.grouped(w.rangeReads)) reads; warm: every chunk read once since the store opened)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(engineReads),
            baselines: [("raw-lmdb", Stopwatch.median(rawReads)), ("file-per-key", Stopwatch.median(fileReads))])
        record(
            "\(readSize) range read at random offsets of a \(entrySize) entry (\(Workloads.grouped(w.rangeReads)) reads; cold: the first reads after opening the store)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(engineCold),
            baselines: [
                ("raw-lmdb, cold: reopened too", Stopwatch.median(rawCold)),
                ("raw-lmdb, warm", Stopwatch.median(rawReads)),
            ])

        // Where the engine's read time goes (outside the timings).
        let offsets = w.rangeOffsets(repetition: 50)
        let threshold = 0.000_5
        let profile = try Self.profileCalls(Array(offsets.indices), slowerThan: threshold) { index in
            _ = try store.read(forKey: key, range: offsets[index]..<offsets[index] + length)
        }
        note("engine \(readSize) range read, each call timed: " + profile.summary(threshold: threshold) + ".")

        // Spot checks, outside the timings: every system returns the right bytes.
        var wrong = 0
        for offset in w.rangeOffsets(repetition: 99).prefix(50) {
            let expected = entry[offset..<offset + length]
            if try store.read(forKey: key, range: offset..<offset + length) != expected { wrong += 1 }
            if try Self.rawRead(raw, offset: offset, length: length, chunkSize: w.rawChunkSize) != expected {
                wrong += 1
            }
        }
        let tail = (w.rangeEntryBytes - 1000)..<w.rangeEntryBytes
        if try store.read(forKey: key, range: tail) != entry[tail] { wrong += 1 }
        verify(wrong == 0, "range reads: \(wrong) spot checks returned different bytes")
    }

    /// Copies `offset..<offset+length` out of the chunk items it spans,
    /// in one read transaction.
    static func rawRead(_ raw: RawLMDBBaseline, offset: Int, length: Int, chunkSize: Int) throws -> Data {
        try raw.read { txn in
            var output = Data(count: length)
            try output.withUnsafeMutableBytes { out in
                var position = offset
                let end = offset + length
                while position < end {
                    let index = position / chunkSize
                    let chunkStart = index * chunkSize
                    let copied = try txn.withValue(forKey: RawLMDBBaseline.chunkKey(entry: 1, index: index)) {
                        chunk -> Int in
                        guard let chunk else {
                            throw RawLMDBBaseline.Failure(code: MDB_NOTFOUND, call: "mdb_get (chunk \(index))")
                        }
                        let from = position - chunkStart
                        let to = min(chunk.count, end - chunkStart)
                        guard from < to else { return 0 }
                        UnsafeMutableRawBufferPointer(rebasing: out[(position - offset)...])
                            .copyMemory(from: UnsafeRawBufferPointer(rebasing: chunk[from..<to]))
                        return to - from
                    }
                    guard copied > 0 else { break }
                    position += copied
                }
            }
            return output
        }
    }
}
