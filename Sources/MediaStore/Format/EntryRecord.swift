import Foundation

/// The value stored in `keys` (and `staging`) for one entry.
///
/// Binary layout, version 1: version, flags, then fields in the order of
/// ``encode()``. Decoding never traps on malformed bytes.
package struct EntryRecord: Equatable {
    static let version: UInt8 = 1

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let complete = Flags(rawValue: 1)
        static let pinned = Flags(rawValue: 2)
        static let inline = Flags(rawValue: 4)
        static let lengthKnown = Flags(rawValue: 8)
        static let compressedMedia = Flags(rawValue: 16)
        /// The expiry field holds `Date.timeIntervalSinceReferenceDate`
        /// (store format 2), not seconds since 1970, so it reads back bit
        /// for bit; records without it are read as before.
        static let exactExpiry = Flags(rawValue: 32)
        /// The whole value is in a `packs` row (store format 4): at
        /// ``EntryRecord/packOffset`` of pack ``EntryRecord/packID``.
        static let packed = Flags(rawValue: 64)
    }

    var key: String
    var flags: Flags
    /// Identifies the entry's rows in `extents`.
    var entryID: UInt64
    var length: Int?
    var chunkSize: Int
    var presentChunks: Int
    var cachedBytes: Int
    var digest: ContentDigest?
    var created: Double
    var lastAccess: Double
    var accessTick: UInt64
    /// Seconds since 1970; `nil` for never. Set both with ``setExpiry(_:)``.
    var expiry: Double?
    /// The expiry exactly as written (`Date` has more precision near now
    /// than seconds since 1970 in a `Double`); `nil` for never and for
    /// records written before store format 2.
    var exactExpiry: Date?
    var cost: Int
    var metadata: EntryMetadata
    /// The owner process of a staging record.
    var ownerPID: Int32
    var inlineBytes: [UInt8]
    /// The pack holding the value of a packed record (``Flags/packed``).
    var packID: UInt64 = 0
    /// Where the value starts in its pack's row.
    var packOffset: Int = 0

    var isComplete: Bool {
        get { flags.contains(.complete) }
        set { if newValue { flags.insert(.complete) } else { flags.remove(.complete) } }
    }

    var isPinned: Bool {
        get { flags.contains(.pinned) }
        set { if newValue { flags.insert(.pinned) } else { flags.remove(.pinned) } }
    }

    /// Whether the value is in the record itself.
    var isInline: Bool { flags.contains(.inline) }

    /// Whether the value is in a pack (store format 4).
    var isPacked: Bool { flags.contains(.packed) }

    /// Whether the value is kept whole, inline or packed, not in chunks:
    /// such an entry has no extents and is never filled range by range.
    var isUnchunked: Bool { !flags.isDisjoint(with: [.inline, .packed]) }

    /// The length of an unchunked value.
    var unchunkedLength: Int { isPacked ? (length ?? 0) : inlineBytes.count }

    /// Chunks the entry has when complete; `nil` while the length is unknown.
    var totalChunks: Int? {
        guard let length else { return nil }
        return (length + chunkSize - 1) / chunkSize
    }

    package func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 96 + key.utf8.count + inlineBytes.count)
        writer.write(Self.version)
        var flags = self.flags
        if length != nil { flags.insert(.lengthKnown) } else { flags.remove(.lengthKnown) }
        if exactExpiry != nil { flags.insert(.exactExpiry) } else { flags.remove(.exactExpiry) }
        writer.write(flags.rawValue)
        writer.write(key)
        writer.writeVarint(entryID)
        writer.writeVarint(UInt64(length ?? 0))
        writer.writeVarint(UInt64(chunkSize))
        writer.writeVarint(UInt64(presentChunks))
        writer.writeVarint(UInt64(cachedBytes))
        if let digest {
            writer.write(UInt8(1))
            writer.write(raw: digest.canonicalBytes)
        } else {
            writer.write(UInt8(0))
        }
        writer.write(created)
        writer.write(lastAccess)
        writer.writeVarint(accessTick)
        writer.write(exactExpiry?.timeIntervalSinceReferenceDate ?? expiry ?? .infinity)
        writer.writeVarint(UInt64(max(0, cost)))
        writer.write(optional: metadata.mimeType)
        writer.write(optional: metadata.etag)
        writer.write(optional: metadata.lastModified)
        writer.writeVarint(UInt64(metadata.userInfo.count))
        for (name, value) in metadata.userInfo.sorted(by: { $0.key < $1.key }) {
            writer.write(name)
            writer.write(value)
        }
        writer.write(littleEndian: ownerPID)
        writer.write(bytes: inlineBytes)
        if flags.contains(.packed) {
            writer.writeVarint(packID)
            writer.writeVarint(UInt64(packOffset))
        }
        return writer.bytes
    }

    /// Whether the record in `buffer` is stored for `key`, comparing the
    /// UTF-8 bytes without decoding the rest (the hot path of a lookup).
    package static func storedKeyMatches(_ buffer: UnsafeRawBufferPointer, _ key: String) -> Bool {
        var reader = ByteReader(buffer)
        guard (try? reader.readByte()) == version, (try? reader.readByte()) != nil,
            let stored = try? reader.readBytes()
        else { return false }
        var key = key
        return key.withUTF8 { utf8 in
            utf8.count == stored.count
                && (utf8.isEmpty || memcmp(utf8.baseAddress!, stored.baseAddress!, utf8.count) == 0)
        }
    }

    /// Decodes a record; `nil` when the bytes are not a valid record.
    package static func decode(_ buffer: UnsafeRawBufferPointer) -> EntryRecord? {
        decode(buffer, storedKey: nil)
    }

    /// Decodes a record whose stored key the caller has already matched.
    ///
    /// - parameter storedKey: the key found stored in `buffer`
    ///   (``storedKeyMatches(_:_:)``), used as it is instead of decoding a
    ///   new string (a lookup's hot path); `nil` decodes the stored one.
    package static func decode(_ buffer: UnsafeRawBufferPointer, storedKey: String?) -> EntryRecord? {
        var reader = ByteReader(buffer)
        do {
            guard try reader.readByte() == version else { return nil }
            let flags = Flags(rawValue: try reader.readByte())
            let key: String
            if let storedKey {
                _ = try reader.readBytes()
                key = storedKey
            } else {
                key = try reader.readString()
            }
            let entryID = try reader.readVarint()
            let length = try reader.readVarint()
            let chunkSize = try reader.readVarint()
            let present = try reader.readVarint()
            let cached = try reader.readVarint()
            var digest: ContentDigest?
            if try reader.readByte() == 1 {
                digest = ContentDigest(canonical: try reader.readRaw(count: 16))
            }
            let created = try reader.readDouble()
            let lastAccess = try reader.readDouble()
            let tick = try reader.readVarint()
            let expiry = try reader.readDouble()
            let cost = try reader.readVarint()
            var metadata = EntryMetadata()
            metadata.mimeType = try reader.readOptionalString()
            metadata.etag = try reader.readOptionalString()
            metadata.lastModified = try reader.readOptionalString()
            let userCount = try reader.readVarint()
            guard userCount <= UInt64(reader.remaining) else { return nil }
            for _ in 0..<userCount {
                let name = try reader.readString()
                metadata.userInfo[name] = try reader.readString()
            }
            let owner = try reader.read(littleEndian: Int32.self)
            let inline = [UInt8](try reader.readBytes())
            var packID: UInt64 = 0
            var packOffset: UInt64 = 0
            if flags.contains(.packed) {
                packID = try reader.readVarint()
                packOffset = try reader.readVarint()
                guard packOffset <= UInt64(UInt32.max), flags.contains(.lengthKnown) else { return nil }
            }
            let limit = UInt64(Int.max / 2)
            guard chunkSize > 0, chunkSize <= UInt64(UInt32.max), length <= limit, present <= limit,
                cached <= limit, cost <= limit
            else { return nil }
            var record = EntryRecord(
                key: key, flags: flags, entryID: entryID,
                length: flags.contains(.lengthKnown) ? Int(length) : nil,
                chunkSize: Int(chunkSize), presentChunks: Int(present), cachedBytes: Int(cached),
                digest: digest, created: created, lastAccess: lastAccess, accessTick: tick,
                expiry: nil, cost: Int(cost), metadata: metadata, ownerPID: owner, inlineBytes: inline,
                packID: packID, packOffset: Int(packOffset))
            if expiry.isFinite {
                if flags.contains(.exactExpiry) {
                    record.setExpiry(Date(timeIntervalSinceReferenceDate: expiry))
                } else {
                    record.expiry = expiry
                }
            }
            return record
        } catch {
            return nil
        }
    }

    /// The expiry as a `Date`: exact for records of store format 2.
    var expiryDate: Date? {
        exactExpiry ?? expiry.map { Date(timeIntervalSince1970: $0) }
    }

    /// Sets the expiry; `expiry` (seconds since 1970, what the expiry index
    /// and the expiry checks use) is derived from the exact date.
    mutating func setExpiry(_ date: Date?) {
        exactExpiry = date
        expiry = date?.timeIntervalSince1970
    }

    package func info() -> EntryInfo {
        EntryInfo(
            key: key, length: length, cachedBytes: cachedBytes, isComplete: isComplete,
            contentDigest: isComplete ? digest : nil, metadata: metadata,
            created: Date(timeIntervalSince1970: created), lastAccess: Date(timeIntervalSince1970: lastAccess),
            expiry: expiryDate, cost: cost, isPinned: isPinned,
            chunkSize: chunkSize, chunkCount: isUnchunked ? 0 : presentChunks, version: entryID)
    }
}
