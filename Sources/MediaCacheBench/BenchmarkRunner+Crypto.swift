import Foundation
import MediaStore

extension BenchmarkRunner {
    /// The cost of encryption at rest's primitives on one 256 KiB chunk of
    /// random bytes (`StoreEncryption`, through the library the store uses),
    /// beside copying and XXH3-128 of the same bytes, which is what a plain
    /// store does with them: the keyed identity (HMAC-SHA256), sealing and
    /// opening the whole chunk, opening one 16 KiB block (the chunk key
    /// derived each time, as a range read does), and opening a 1 KiB record.
    func runCrypto() throws {
        let quick = options.quick
        let chunkBytes = 256 << 10
        let blockBytes = ChunkSealer.blockSize
        let chunkIterations = quick ? 100 : 1_000
        let blockIterations = quick ? 2_000 : 20_000
        log("crypto: \(Workloads.describe(bytes: chunkBytes)) chunks and \(blockBytes >> 10) KiB blocks")

        var generator = SplitMix64(seed: 0xC0DE_0029)
        let chunk = generator.bytes(chunkBytes)
        let encryption = StoreEncryption(key: StoreKey.random())
        let identity = encryption.chunkIdentity(of: chunk)
        let sealed = encryption.chunkSealer(for: identity).seal(chunk)
        var copy = [UInt8](repeating: 0, count: chunkBytes)
        var opened = [UInt8](repeating: 0, count: chunkBytes)
        var sealedOut = [UInt8](repeating: 0, count: sealed.count)
        var sink: UInt64 = 0

        /// MB/s of `body` run `iterations` times over `bytes` each, the
        /// median of the repetitions.
        func rate(_ bytes: Int, _ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
            var rates: [Double] = []
            for _ in 0..<workloads.repetitions {
                let seconds = try Stopwatch.time { for _ in 0..<iterations { try body() } }
                rates.append(Self.megabytesPerSecond(bytes * iterations, seconds))
            }
            return Stopwatch.median(rates)
        }

        let copyRate = rate(chunkBytes, chunkIterations) {
            copy.withUnsafeMutableBytes { out in chunk.withUnsafeBytes { out.copyMemory(from: $0) } }
        }
        let xxh3Rate = rate(chunkBytes, chunkIterations) { sink &+= ContentDigest(of: chunk).low }
        let baselines = [("copy", copyRate), ("XXH3-128", xxh3Rate)]
        let unit = "MB/s (higher is better)"

        let identityRate = rate(chunkBytes, chunkIterations) { sink &+= encryption.chunkIdentity(of: chunk).low }
        record(
            "crypto: keyed identity (HMAC-SHA256) of a 256 KiB chunk", unit: unit, engine: identityRate,
            baselines: baselines)

        let sealRate = rate(chunkBytes, chunkIterations) {
            let sealer = encryption.chunkSealer(for: identity)
            chunk.withUnsafeBytes { plain in sealedOut.withUnsafeMutableBytes { sealer.seal(plain, into: $0) } }
        }
        record(
            "crypto: seal a 256 KiB chunk (AES-256-GCM, 16 KiB blocks)", unit: unit, engine: sealRate,
            baselines: baselines)
        verify(sealedOut == sealed, "crypto: sealing is not deterministic")

        let allBlocks = 0..<ChunkSealer.blockCount(plaintextCount: chunkBytes)
        let openRate = try rate(chunkBytes, chunkIterations) {
            let sealer = encryption.chunkSealer(for: identity)
            try sealed.withUnsafeBytes { sealedBytes in
                try opened.withUnsafeMutableBytes { try sealer.open(sealedBytes, blocks: allBlocks, into: $0) }
            }
        }
        record("crypto: open a 256 KiB chunk", unit: unit, engine: openRate, baselines: baselines)
        verify(opened == chunk, "crypto: the opened chunk differs from the sealed one")

        let blockCopyRate = rate(blockBytes, blockIterations) {
            copy.withUnsafeMutableBytes { out in
                chunk.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: out[..<blockBytes])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[5 * blockBytes..<6 * blockBytes]))
                }
            }
        }
        let blockXXH3Rate = rate(blockBytes, blockIterations) {
            sink &+= ContentDigest(of: chunk[5 * blockBytes..<6 * blockBytes]).low
        }
        let blockRate = try rate(blockBytes, blockIterations) {
            let sealer = encryption.chunkSealer(for: identity)
            try sealed.withUnsafeBytes { sealedBytes in
                try opened.withUnsafeMutableBytes {
                    try sealer.open(
                        sealedBytes, blocks: 5..<6, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<blockBytes]))
                }
            }
        }
        record(
            "crypto: open one 16 KiB block of a 256 KiB chunk (chunk key derived each time)", unit: unit,
            engine: blockRate, baselines: [("copy", blockCopyRate), ("XXH3-128", blockXXH3Rate)])
        verify(Array(opened[..<blockBytes]) == Array(chunk[5 * blockBytes..<6 * blockBytes]), "crypto: block 5 differs")

        let record1K = Array(chunk[..<1024])
        let context = identity.canonicalBytes
        let sealedRecord = encryption.recordSealer.seal(record1K, context: context)
        var recordOpens: [Double] = []
        for _ in 0..<workloads.repetitions {
            let seconds = try Stopwatch.time {
                for _ in 0..<blockIterations {
                    sink &+= UInt64(try encryption.recordSealer.open(sealedRecord, context: context).count)
                }
            }
            recordOpens.append(Double(blockIterations) / seconds)
        }
        record(
            BenchResult(
                name: "crypto: open a sealed 1 KiB record", unit: "ops/s (higher is better)",
                value: Stopwatch.median(recordOpens)))
        note("crypto: \(CryptoPrimitives.libraryName); checksum \(sink % 10)")
    }
}
