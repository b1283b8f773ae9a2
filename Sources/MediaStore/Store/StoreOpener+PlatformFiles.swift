import Foundation

extension StoreOpener {
    /// On iOS, tvOS, watchOS and visionOS: marks the store directory
    /// excluded from iCloud and device backups (a cache is re-fetchable, and
    /// Apple's storage guidelines ask for it outside Caches), and gives it
    /// and its files the data-protection class "complete until first user
    /// authentication", so that a player in the background can read and
    /// write it while the device is locked (under `.complete`, the mapped
    /// `data.mdb` would become unreadable at lock). New files inherit the
    /// directory's class; existing ones are set too, for stores made by an
    /// older version. Best effort: a failure leaves the system's defaults.
    ///
    /// Not compiled on Linux or macOS, and not run here (CI is Linux):
    /// reasoned from Apple's documentation, see MediaStore.docc/ApplePlatforms.md.
    static func applyPlatformFileAttributes(directory path: String) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            var url = URL(fileURLWithPath: path, isDirectory: true)
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            try? url.setResourceValues(values)
            let protection: [FileAttributeKey: Any] = [
                .protectionKey: FileProtectionType.completeUntilFirstUserAuthentication
            ]
            for item in [path, path + "/data.mdb", path + "/" + lockFileName, path + "/" + MaintenanceLock.fileName]
            where FileManager.default.fileExists(atPath: item) {
                try? FileManager.default.setAttributes(protection, ofItemAtPath: item)
            }
        #endif
    }
}
