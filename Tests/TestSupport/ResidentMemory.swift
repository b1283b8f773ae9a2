import Foundation

/// The process's anonymous resident memory (`RssAnon` of
/// `/proc/self/status`: heap and stacks, not mapped files such as a
/// store's LMDB map), and a sampler of its peak while something runs.
public enum ResidentMemory {
    /// Anonymous resident bytes now; 0 where `/proc` is not available.
    public static func anonymousBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("RssAnon:") {
            let digits = line.dropFirst("RssAnon:".count).filter(\.isNumber)
            return (Int(digits) ?? 0) * 1024
        }
        return 0
    }

    /// The growth of anonymous resident memory over `body`: the peak
    /// sampled every `interval` (and at the end) minus the value before.
    public static func peakGrowth<T>(
        sampling interval: Duration = .milliseconds(5), during body: () async throws -> T
    ) async rethrows -> (value: T, growth: Int) {
        let sampler = PeakSampler(interval: interval)
        let value = try await body()
        return (value, sampler.stop())
    }
}

/// Samples ``ResidentMemory/anonymousBytes()`` on a thread of its own until stopped.
final class PeakSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak: Int
    private var stopped = false
    private let base: Int
    private let done = DispatchSemaphore(value: 0)

    init(interval: Duration) {
        base = ResidentMemory.anonymousBytes()
        peak = base
        let micros = useconds_t(max(1, interval.components.attoseconds / 1_000_000_000_000))
        Thread { [self] in
            while true {
                let now = ResidentMemory.anonymousBytes()
                let running = lock.withLock {
                    peak = max(peak, now)
                    return !stopped
                }
                if !running { break }
                usleep(micros)
            }
            done.signal()
        }.start()
    }

    /// Stops sampling; the peak growth over the base.
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        let last = ResidentMemory.anonymousBytes()
        return lock.withLock { max(peak, last) - base }
    }
}

/// Bytes that say where they are: byte `i` of the content is byte `i % 8`
/// of the little-endian 64-bit `(i / 8) ^ seed`, so a piece out of place,
/// repeated or from another content shows.
public enum SelfDescribingBytes {
    /// Bytes `range` of the content of `seed`.
    public static func bytes(_ range: Range<Int>, seed: UInt64 = 0) -> Data {
        let firstWord = range.lowerBound / 8
        let words = (range.upperBound + 7) / 8 - firstWord
        var all = [UInt64](repeating: 0, count: words)
        for index in 0..<words { all[index] = (UInt64(firstWord + index) ^ seed).littleEndian }
        return all.withUnsafeBytes { raw in
            let start = range.lowerBound - firstWord * 8
            return Data(raw[start..<start + range.count])
        }
    }

    /// Whether `data` is bytes `offset..<offset + data.count` of the content of `seed`.
    public static func matches(_ data: Data, at offset: Int, seed: UInt64 = 0) -> Bool {
        data == bytes(offset..<offset + data.count, seed: seed)
    }
}

extension ScriptedOrigin.Reply {
    /// Sends `total` bytes (a repeated piece of `piece` bytes) as fast as
    /// the client takes them, or with `pace` between pieces, until all are
    /// sent, the client has gone or the origin stopped; returns whether all
    /// were sent. The bytes sent are ``sentBytes``.
    @discardableResult
    public func flood(total: Int, piece: Int = 1 << 20, pace: Duration = .zero) -> Bool {
        let bytes = Data(repeating: 0x47, count: piece)
        let micros = useconds_t(pace.components.seconds * 1_000_000 + pace.components.attoseconds / 1_000_000_000_000)
        var offset = 0
        while offset < total {
            let count = min(piece, total - offset)
            guard !originStopped, send(count == piece ? bytes : bytes.prefix(count)) else { return false }
            offset += count
            if micros > 0 { usleep(micros) }
        }
        return true
    }
}
