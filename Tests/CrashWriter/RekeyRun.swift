import Foundation
import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `crash-writer rekey`: the child of the rekey crash loop
/// (RekeyTests in MediaStoreTests). Opens the store with one of two keys
/// and rekeys it to the other in small steps; after step `killStep`
/// (0: right after start) it SIGKILLs itself `killAfter` microseconds
/// later, wherever it is then (between steps, inside one, or in the
/// commit). Exits 0 when the rekey finished first, 3 when the key it was
/// told to open with is not (yet, or any more) the store's, 2 on any
/// other failure.
enum RekeyRun {
    static func run(directory: String, keys: [String], openWith: Int, killStep: Int, killAfter: UInt32) -> Int32 {
        guard keys.count == 2, let from = key(hex: keys[0]), let to = key(hex: keys[1]), (0...1).contains(openWith)
        else {
            FileHandle.standardError.write(Data("crash-writer rekey: bad keys\n".utf8))
            return 64
        }
        @Sendable func killLater() {
            Thread {
                usleep(killAfter)
                kill(getpid(), SIGKILL)
            }.start()
        }
        if killStep == 0 { killLater() }
        var configuration = StoreConfiguration(chunkSize: 8192, initialMapSize: 64 << 20)
        configuration.encryption = StoreConfiguration.Encryption(key: openWith == 0 ? from : to)
        let store: MediaStore
        do {
            store = try MediaStore(directory: URL(fileURLWithPath: directory), configuration: configuration)
        } catch StoreError.wrongKey {
            return 3
        } catch {
            FileHandle.standardError.write(Data("crash-writer rekey: \(error)\n".utf8))
            return 2
        }
        let done = DispatchSemaphore(value: 0)
        let status = Locked32()
        Task {
            do {
                try await store.rekey(
                    to: to,
                    options: RekeyOptions(batchEntries: 3) { progress in
                        if progress.steps == killStep { killLater() }
                    })
                store.close()
                status.set(0)
            } catch {
                FileHandle.standardError.write(Data("crash-writer rekey: \(error)\n".utf8))
                status.set(2)
            }
            done.signal()
        }
        done.wait()
        return status.get()
    }

    static func key(hex: String) -> StoreKey? {
        let digits = Array(hex.utf8)
        guard digits.count == 2 * StoreKey.byteCount else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return try? StoreKey(bytes: bytes)
    }
}

/// An exit status handed from the rekey task to the main thread.
private final class Locked32: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int32 = 2

    func set(_ newValue: Int32) { lock.withLock { value = newValue } }
    func get() -> Int32 { lock.withLock { value } }
}
