/// Why a chunk could not be read.
package enum ChunkFault: Error, CustomStringConvertible {
    case missing, header, decompression, checksum

    package var description: String {
        switch self {
        case .missing: "a chunk is missing"
        case .header: "a chunk header is invalid"
        case .decompression: "a chunk does not decompress"
        case .checksum: "a chunk fails its checksum"
        }
    }
}
