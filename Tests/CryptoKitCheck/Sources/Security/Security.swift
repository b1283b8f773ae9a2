// A stand-in of the part of Apple's Security framework that MediaStore's
// KeychainStoreKey uses, with Security's names and signatures (as Apple
// documents them; each declaration cites its page). Only for
// Tests/CryptoKitCheck: it checks the glue on Linux, not the Keychain.
//
// Core Foundation types are their Swift counterparts here (CFString is
// String, CFDictionary is [String: Any], CFTypeRef is AnyObject), so the
// glue's `as String` / `as CFDictionary` compile as on Apple platforms but
// the toll-free bridging itself is not exercised. The Keychain is a list
// of items in memory with the documented semantics: an add whose primary
// key (class, service, account, synchronizable) is taken answers
// errSecDuplicateItem; a look-up or a delete that matches nothing answers
// errSecItemNotFound; a query without kSecAttrSynchronizable matches only
// items that are not synchronizable. `StandInKeychain` lets a test read an
// item's attributes, make a call answer a status, and run code just
// before an add (another process adding the same item).
import Foundation

/// https://developer.apple.com/documentation/kernel/osstatus
public typealias OSStatus = Int32
/// https://developer.apple.com/documentation/corefoundation/cfstring
public typealias CFString = String
/// https://developer.apple.com/documentation/corefoundation/cfdictionary
public typealias CFDictionary = [String: Any]
/// https://developer.apple.com/documentation/corefoundation/cftyperef
public typealias CFTypeRef = AnyObject

// MARK: Result codes

/// https://developer.apple.com/documentation/security/errsecsuccess
public let errSecSuccess: OSStatus = 0
/// https://developer.apple.com/documentation/security/errsecparam
public let errSecParam: OSStatus = -50
/// https://developer.apple.com/documentation/security/errsecduplicateitem
public let errSecDuplicateItem: OSStatus = -25299
/// https://developer.apple.com/documentation/security/errsecitemnotfound
public let errSecItemNotFound: OSStatus = -25300
/// https://developer.apple.com/documentation/security/errsecinteractionnotallowed
public let errSecInteractionNotAllowed: OSStatus = -25308
/// https://developer.apple.com/documentation/security/errsecmissingentitlement
public let errSecMissingEntitlement: OSStatus = -34018

// MARK: Item attribute keys and values (the stand-in's strings are its own)

/// https://developer.apple.com/documentation/security/ksecclass
public let kSecClass: CFString = "class"
/// https://developer.apple.com/documentation/security/ksecclassgenericpassword
public let kSecClassGenericPassword: CFString = "genp"
/// https://developer.apple.com/documentation/security/ksecattrservice
public let kSecAttrService: CFString = "svce"
/// https://developer.apple.com/documentation/security/ksecattraccount
public let kSecAttrAccount: CFString = "acct"
/// https://developer.apple.com/documentation/security/ksecattraccessible
public let kSecAttrAccessible: CFString = "pdmn"
/// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlockthisdeviceonly
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// https://developer.apple.com/documentation/security/ksecattraccessiblewhenunlocked
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// https://developer.apple.com/documentation/security/ksecattrsynchronizable
public let kSecAttrSynchronizable: CFString = "sync"
/// https://developer.apple.com/documentation/security/ksecusedataprotectionkeychain
public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// https://developer.apple.com/documentation/security/ksecvaluedata
public let kSecValueData: CFString = "v_Data"
/// https://developer.apple.com/documentation/security/ksecreturndata
public let kSecReturnData: CFString = "r_Data"
/// https://developer.apple.com/documentation/security/ksecmatchlimit
public let kSecMatchLimit: CFString = "m_Limit"
/// https://developer.apple.com/documentation/security/ksecmatchlimitone
public let kSecMatchLimitOne: CFString = "m_LimitOne"

// MARK: Functions

/// https://developer.apple.com/documentation/security/secitemadd(_:_:)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    StandInKeychain.shared.add(attributes)
}

/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    StandInKeychain.shared.copyMatching(query, result)
}

/// https://developer.apple.com/documentation/security/secitemdelete(_:)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    StandInKeychain.shared.delete(query)
}

/// https://developer.apple.com/documentation/security/secrandomref
public final class SecRandomRef: Sendable {}

/// https://developer.apple.com/documentation/security/ksecrandomdefault
public let kSecRandomDefault: SecRandomRef? = nil

/// https://developer.apple.com/documentation/security/secrandomcopybytes(_:_:_:)
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    if let status = StandInKeychain.shared.takeRandomFailure() { return status }
    var generator = SystemRandomNumberGenerator()
    for index in 0..<count { bytes.storeBytes(of: generator.next(), toByteOffset: index, as: UInt8.self) }
    return errSecSuccess
}

// MARK: The in-memory Keychain

/// The stand-in's items, and what a test makes it do.
public final class StandInKeychain: @unchecked Sendable {
    /// A Security call a test can make answer a status.
    public enum Call: Sendable { case add, copyMatching, delete }

    public static let shared = StandInKeychain()

    private let lock = NSLock()
    private var items: [[String: Any]] = []
    private var failures: [String: [(Call, OSStatus)]] = [:]
    private var beforeAdd: [String: @Sendable () -> Void] = [:]
    private var randomFailure: OSStatus?

    /// The attributes of the item of `service` and `account` (including
    /// kSecValueData), or nil.
    public func attributes(service: String, account: String) -> [String: Any]? {
        lock.withLock {
            items.first { $0[kSecAttrService] as? String == service && $0[kSecAttrAccount] as? String == account }
        }
    }

    /// Makes the next `call` on an item of `service` answer `status`
    /// without doing anything.
    public func failNext(_ call: Call, service: String, status: OSStatus) {
        lock.withLock { failures[service, default: []].append((call, status)) }
    }

    /// Runs `body` at the start of the next add of an item of `service`,
    /// before the stand-in looks for a duplicate.
    public func beforeNextAdd(service: String, _ body: @escaping @Sendable () -> Void) {
        lock.withLock { beforeAdd[service] = body }
    }

    /// Makes the next SecRandomCopyBytes answer `status`.
    public func failNextRandom(status: OSStatus) {
        lock.withLock { randomFailure = status }
    }

    func takeRandomFailure() -> OSStatus? {
        lock.withLock {
            defer { randomFailure = nil }
            return randomFailure
        }
    }

    private func takeFailure(_ call: Call, _ query: [String: Any]) -> OSStatus? {
        guard let service = query[kSecAttrService] as? String else { return nil }
        return lock.withLock {
            guard let index = failures[service]?.firstIndex(where: { $0.0 == call }) else { return nil }
            return failures[service]!.remove(at: index).1
        }
    }

    func add(_ attributes: [String: Any]) -> OSStatus {
        if let status = takeFailure(.add, attributes) { return status }
        if let service = attributes[kSecAttrService] as? String,
            let body = lock.withLock({ beforeAdd.removeValue(forKey: service) })
        {
            body()
        }
        guard attributes[kSecClass] as? String == kSecClassGenericPassword, attributes[kSecValueData] is Data
        else { return errSecParam }
        if let accessible = attributes[kSecAttrAccessible] {
            guard
                let value = accessible as? String,
                [kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleWhenUnlocked].contains(value)
            else { return errSecParam }
        }
        var item = attributes
        item[kSecAttrSynchronizable] = attributes[kSecAttrSynchronizable] as? Bool ?? false
        return lock.withLock {
            let primaryKey = [kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrSynchronizable]
            if items.contains(where: { existing in primaryKey.allSatisfy { same(existing[$0], item[$0]) } }) {
                return errSecDuplicateItem
            }
            items.append(item)
            return errSecSuccess
        }
    }

    func copyMatching(_ query: [String: Any], _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        if let status = takeFailure(.copyMatching, query) { return status }
        guard query[kSecMatchLimit] == nil || query[kSecMatchLimit] as? String == kSecMatchLimitOne else {
            return errSecParam
        }
        return lock.withLock {
            guard let item = items.first(where: { matches($0, query) }) else { return errSecItemNotFound }
            if query[kSecReturnData] as? Bool == true { result?.pointee = item[kSecValueData] as AnyObject }
            return errSecSuccess
        }
    }

    func delete(_ query: [String: Any]) -> OSStatus {
        if let status = takeFailure(.delete, query) { return status }
        return lock.withLock {
            let before = items.count
            items.removeAll { matches($0, query) }
            return items.count < before ? errSecSuccess : errSecItemNotFound
        }
    }

    /// Whether `item` has every attribute `query` names (kSecClass and
    /// kSecAttr… keys; search and return keys are not attributes).
    private func matches(_ item: [String: Any], _ query: [String: Any]) -> Bool {
        let attributeKeys: Set = [kSecClass, kSecAttrService, kSecAttrAccount, kSecAttrAccessible]
        var wanted = query.filter { attributeKeys.contains($0.key) }
        wanted[kSecAttrSynchronizable] = query[kSecAttrSynchronizable] as? Bool ?? false
        return wanted.allSatisfy { same(item[$0.key], $0.value) }
    }

    private func same(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs as String, let rhs as String): lhs == rhs
        case (let lhs as Bool, let rhs as Bool): lhs == rhs
        case (let lhs as Data, let rhs as Data): lhs == rhs
        default: false
        }
    }
}
