import Foundation
import MediaStreaming

/// Whether a Linux machine runs on external power, from
/// `/sys/class/power_supply/*/{type,online,status}` (the kernel's
/// power-supply class). Pure parsing, with a reader for the real folder.
public enum PowerSupplyStatus {
    /// One supply as the kernel describes it.
    public struct Supply: Sendable, Equatable {
        /// `Mains`, `USB`, `Battery`, …
        public var type: String
        /// `online` (mains/USB): 1 when plugged in.
        public var online: String?
        /// `status` (batteries): `Charging`, `Discharging`, `Full`, `Not charging`, `Unknown`.
        public var status: String?

        public init(type: String, online: String? = nil, status: String? = nil) {
            self.type = type
            self.online = online
            self.status = status
        }
    }

    /// Charging (or on external power) when any mains/USB supply is online
    /// or any battery is charging or full; not charging when there are
    /// batteries and none of that holds; `nil` when the machine reports no
    /// supplies (a server, a container).
    public static func isCharging(_ supplies: [Supply]) -> Bool? {
        func clean(_ text: String?) -> String? { text?.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard !supplies.isEmpty else { return nil }
        var sawBattery = false
        for supply in supplies {
            switch clean(supply.type) {
            case "Mains", "USB", "USB_C", "USB_PD", "Wireless":
                if clean(supply.online) == "1" { return true }
            case "Battery":
                sawBattery = true
                if ["Charging", "Full"].contains(clean(supply.status)) { return true }
            default: continue
            }
        }
        return sawBattery ? false : nil
    }

    /// Reads every supply under `directory` (unreadable ones are skipped).
    public static func read(from directory: URL = URL(fileURLWithPath: "/sys/class/power_supply")) -> [Supply] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().compactMap { name in
            let folder = directory.appendingPathComponent(name)
            func field(_ file: String) -> String? {
                try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            }
            guard let type = field("type") else { return nil }
            return Supply(type: type, online: field("online"), status: field("status"))
        }
    }
}
