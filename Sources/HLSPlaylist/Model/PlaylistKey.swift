import Foundation

/// How media segments are encrypted: an `EXT-X-KEY` tag of a media
/// playlist, or an `EXT-X-SESSION-KEY` of a master playlist.
public struct PlaylistKey: Sendable, Hashable {
    /// The encryption method (the `METHOD` attribute).
    public enum Method: String, Sendable, Hashable {
        /// Not encrypted.
        case none = "NONE"
        /// Whole segments encrypted with AES-128 CBC and PKCS7 padding: the
        /// key is 16 bytes fetched from `url`, so it can be kept offline.
        case aes128 = "AES-128"
        /// Samples encrypted inside the segments, usually with a DRM key
        /// (FairPlay's `skd://`).
        case sampleAES = "SAMPLE-AES"
        /// SAMPLE-AES with AES-CTR (RFC 8216bis).
        case sampleAESCTR = "SAMPLE-AES-CTR"
    }

    /// The `KEYFORMAT` a key has when the playlist names none.
    public static let identityKeyFormat = "identity"

    public let method: Method
    /// Where the key is (the resolved `URI`); nil for ``Method/none``.
    public let url: URL?
    /// The 16-byte `IV`, if the playlist gives one. Without it, AES-128
    /// uses the segment's media sequence number as the IV.
    public let initializationVector: [UInt8]?
    /// `KEYFORMAT` (``identityKeyFormat`` when absent): `identity` for a key
    /// fetched as plain bytes, `com.apple.streamingkeydelivery` for FairPlay.
    public let keyFormat: String
    /// `KEYFORMATVERSIONS` (`[1]` when absent).
    public let keyFormatVersions: [Int]

    public init(
        method: Method, url: URL?, initializationVector: [UInt8]? = nil, keyFormat: String = identityKeyFormat,
        keyFormatVersions: [Int] = [1]
    ) {
        self.method = method
        self.url = url
        self.initializationVector = initializationVector
        self.keyFormat = keyFormat
        self.keyFormatVersions = keyFormatVersions
    }
}
