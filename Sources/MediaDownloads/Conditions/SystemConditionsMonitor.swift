import Foundation
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``ConditionsMonitor`` that asks the operating system, polling every
/// `interval`:
///
/// - free bytes on the store's volume: `statvfs` (blocks available to
///   unprivileged users);
/// - on Linux, network: any interface other than loopback whose
///   `/sys/class/net/*/operstate` is `up` (never expensive or constrained:
///   Linux does not say); charging: ``PowerSupplyStatus`` from
///   `/sys/class/power_supply`; Low Power Mode: never;
/// - on Apple platforms, Low Power Mode from `ProcessInfo`; network and
///   battery state are not read here yet (no Apple SDK to build against):
///   an app there passes the state from `NWPathMonitor` and `UIDevice` into
///   a ``SettableConditionsMonitor``.
public final class SystemConditionsMonitor: ConditionsMonitor {
    /// The folder whose volume's free space counts (the store's).
    public let volume: URL
    /// How often the state is read again for ``updates()``.
    public let interval: Duration

    public init(volume: URL, interval: Duration = .seconds(5)) {
        self.volume = volume
        self.interval = interval
    }

    public var current: DeviceConditions {
        var conditions = DeviceConditions(freeBytes: Self.freeBytes(at: volume))
        #if os(Linux)
            conditions.isNetworkAvailable = Self.linuxNetworkIsUp()
            conditions.isCharging = PowerSupplyStatus.isCharging(PowerSupplyStatus.read())
        #elseif canImport(Darwin)
            conditions.isLowPowerMode = ProcessInfo.processInfo.isLowPowerModeEnabled
        #endif
        return conditions
    }

    public func updates() -> AsyncStream<DeviceConditions> {
        AsyncStream { continuation in
            let task = Task { [self] in
                var last: DeviceConditions?
                while !Task.isCancelled {
                    let now = current
                    // Free space moves constantly: only changes across 1 MiB count.
                    var comparable = now
                    comparable.freeBytes = now.freeBytes.map { $0 >> 20 }
                    if comparable != last {
                        continuation.yield(now)
                        last = comparable
                    }
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Bytes available to this process on the volume holding `url`; `nil`
    /// when it cannot be read.
    public static func freeBytes(at url: URL) -> Int64? {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    #if os(Linux)
        static func linuxNetworkIsUp(_ directory: URL = URL(fileURLWithPath: "/sys/class/net")) -> Bool {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.contains { name in
                guard name != "lo",
                    let state = try? String(
                        contentsOf: directory.appendingPathComponent(name).appendingPathComponent("operstate"),
                        encoding: .utf8)
                else { return false }
                // Virtual links (tunnels, some containers) report "unknown" while they carry traffic.
                return ["up", "unknown"].contains(state.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
    #endif
}
