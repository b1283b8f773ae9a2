import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

/// The persistent queue's pure parts: the state machine, conditions, the
/// power-supply reading, the settable monitor, and the index in a store.
@Suite("Download queue model")
struct DownloadQueueModelTests {
    static let statuses: [DownloadStatus] = [
        .queued, .waiting([.expensiveNetwork]), .downloading, .stopped(.user), .completed, .failed(.transfer("x")),
        .removing,
    ]
    static let events: [DownloadEvent] = [
        .start, .conditionsUnmet([.notCharging]), .conditionsUnmet([]), .conditionsMet, .yield, .stop(.app("why")),
        .resume, .finish, .fail(.origin(status: 404, url: nil)), .cancel, .remove, .relaunch, .entryLost,
    ]

    /// Every status × event against the table in DownloadLifecycle's
    /// documentation, written out again here independently.
    @Test func everyTransitionIsTheDocumentedOne() {
        func expected(_ status: DownloadStatus, _ event: DownloadEvent) -> DownloadStatus? {
            if status == .removing { return event == .relaunch ? .removing : nil }
            if event == .remove { return .removing }
            switch (status, event) {
            case (.queued, .start): return .downloading
            case (.queued, .relaunch), (.queued, .conditionsMet), (.queued, .yield): return .queued
            case (.queued, .conditionsUnmet(let r)), (.waiting, .conditionsUnmet(let r)),
                (.downloading, .conditionsUnmet(let r)):
                return r.isEmpty ? nil : .waiting(r)
            case (.waiting, .conditionsMet): return .queued
            case (.waiting, .relaunch): return status
            case (.downloading, .finish): return .completed
            case (.downloading, .fail(let f)): return .failed(f)
            case (.downloading, .yield), (.downloading, .relaunch): return .queued
            case (.queued, .stop(let r)), (.waiting, .stop(let r)), (.downloading, .stop(let r)): return .stopped(r)
            case (.queued, .cancel), (.waiting, .cancel), (.downloading, .cancel), (.stopped, .cancel):
                return .failed(.cancelled)
            case (.stopped, .resume), (.failed, .resume): return .queued
            case (.stopped, .relaunch), (.completed, .relaunch), (.failed, .relaunch): return status
            case (.completed, .entryLost): return .queued
            default: return nil
            }
        }
        var taken = 0
        for status in Self.statuses {
            for event in Self.events {
                let result = Result { () throws(DownloadError) in
                    try DownloadLifecycle.next(status, on: event)
                }
                switch (result, expected(status, event)) {
                case (.success(let next), let wanted?):
                    #expect(next == wanted, "\(status) + \(event)")
                    taken += 1
                case (.failure(let error), nil):
                    #expect(error == .transition(status: status, event: event))
                case (let got, let wanted):
                    Issue.record("\(status) + \(event): got \(got), expected \(String(describing: wanted))")
                }
            }
        }
        #expect(taken > 30 && taken < Self.statuses.count * Self.events.count)
        // Every status can be relaunched, so loading an index never fails on a status.
        for status in Self.statuses {
            #expect(throws: Never.self) { try DownloadLifecycle.next(status, on: .relaunch) }
        }
    }

    @Test func conditionsSayWhyTheyAreUnmet() {
        let cellular = DeviceConditions(isExpensive: true, isCharging: false, isLowPowerMode: true, freeBytes: 100)
        #expect(DownloadConditions.any.unmetReasons(in: cellular).isEmpty)
        #expect(DownloadConditions.unmetered.unmetReasons(in: cellular) == [.expensiveNetwork])
        let strict = DownloadConditions(
            allowsExpensiveNetwork: false, requiresCharging: true, allowsLowPowerMode: false, minimumFreeBytes: 1000,
            isDiscretionary: true)
        #expect(
            strict.unmetReasons(in: cellular, higherPriorityActive: true) == [
                .expensiveNetwork, .notCharging, .lowPowerMode, .storageLow(freeBytes: 100, floor: 1000),
                .higherPriorityActive,
            ])
        #expect(strict.unmetReasons(in: DeviceConditions(isNetworkAvailable: false)).first == .noNetwork)
        // Unknown charging state does not satisfy "requires charging"; unknown free space does not block.
        #expect(strict.unmetReasons(in: DeviceConditions()) == [.notCharging])
        #expect(
            strict.unmetReasons(in: DeviceConditions(isCharging: true, freeBytes: 1000), higherPriorityActive: false)
                .isEmpty)
    }

    @Test func powerSupplyStatusFromTheKernelsFolder() throws {
        typealias Supply = PowerSupplyStatus.Supply
        #expect(PowerSupplyStatus.isCharging([]) == nil)
        #expect(PowerSupplyStatus.isCharging([Supply(type: "Mains\n", online: "1\n")]) == true)
        #expect(PowerSupplyStatus.isCharging([Supply(type: "Mains", online: "0")]) == nil)
        #expect(
            PowerSupplyStatus.isCharging([
                Supply(type: "Mains", online: "0"), Supply(type: "Battery", status: "Discharging"),
            ])
                == false)
        #expect(PowerSupplyStatus.isCharging([Supply(type: "Battery", status: "Full\n")]) == true)
        #expect(PowerSupplyStatus.isCharging([Supply(type: "USB", online: "1")]) == true)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("power-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, files) in [
            ("AC", ["type": "Mains\n", "online": "0\n"]), ("BAT0", ["type": "Battery\n", "status": "Charging\n"]),
        ] {
            let supply = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: supply, withIntermediateDirectories: true)
            for (file, text) in files {
                try text.write(to: supply.appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
        }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("broken"), withIntermediateDirectories: true)
        let supplies = PowerSupplyStatus.read(from: folder)
        #expect(supplies.count == 2)
        #expect(PowerSupplyStatus.isCharging(supplies) == true)
        #expect(PowerSupplyStatus.read(from: folder.appendingPathComponent("absent")).isEmpty)
    }

    @Test func theSettableMonitorTellsObserversOfChanges() async {
        let monitor = SettableConditionsMonitor(DeviceConditions(isExpensive: true))
        var updates = monitor.updates().makeAsyncIterator()
        #expect(await updates.next()?.isExpensive == true)
        monitor.update { $0.isExpensive = true }  // no change: not told
        monitor.update { $0.isExpensive = false }
        #expect(await updates.next()?.isExpensive == false)
        #expect(monitor.current.isExpensive == false)
    }

    @Test func theSystemMonitorReadsThisMachine() throws {
        let directory = FileManager.default.temporaryDirectory
        let conditions = SystemConditionsMonitor(volume: directory).current
        let free = try #require(conditions.freeBytes)
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: directory.path)
        let reported = try #require((attributes[.systemFreeSize] as? NSNumber)?.int64Value)
        // Both read the same volume; other processes write meanwhile.
        #expect(abs(free - reported) < 1 << 30, "statvfs \(free) vs FileManager \(reported)")
    }

    @Test func theIndexKeepsRecordsAcrossAReopenAndReconcilesThem() async throws {
        let test = try TestCache()
        let complete = Data((0..<50_000).map { UInt8($0 % 251) })
        try test.store.put(complete, forKey: "kept")
        let url = URL(string: "http://origin.test/a.mp3")!
        let records = [
            DownloadRecord(url: url, cacheKey: "kept", status: .completed, queueOrder: 3),
            DownloadRecord(url: url, cacheKey: "lost", status: .completed, queueOrder: 4),
            DownloadRecord(url: url, cacheKey: "running", status: .downloading, bytesStored: 10, queueOrder: 1),
            DownloadRecord(url: url, cacheKey: "paused", status: .stopped(.user), queueOrder: 2),
            DownloadRecord(
                url: url, cacheKey: "waiting", conditions: .unmetered, status: .waiting([.expensiveNetwork]),
                queueOrder: 5),
        ]
        try DownloadIndex(store: test.store).save(records)  // not kept: the relaunch closes the store
        try await test.relaunch()
        let loaded = try DownloadIndex(store: test.store).load()
        #expect(loaded.map(\.cacheKey) == ["running", "paused", "kept", "lost", "waiting"])
        #expect(loaded.map(\.status) == [.queued, .stopped(.user), .completed, .queued, .waiting([.expensiveNetwork])])
        #expect(loaded[0].bytesStored == 10 && loaded[4].conditions == .unmetered)
        // The index itself is pinned and never expires.
        let info = try #require(try test.store.info(forKey: DownloadIndex.key))
        #expect(info.isPinned && info.expiry == nil)
    }

    @Test func anUnreadableIndexIsATypedErrorNotAnEmptyQueue() throws {
        let test = try TestCache()
        try test.store.put(Data("not json".utf8), forKey: DownloadIndex.key)
        #expect(throws: DownloadError.self) { try DownloadIndex(store: test.store).load() }
        #expect(try DownloadIndex(store: try TestCache().store).load().isEmpty)
    }
}
