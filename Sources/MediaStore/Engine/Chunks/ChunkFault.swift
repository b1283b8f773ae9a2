/// Why a chunk could not be read.
package enum ChunkFault: Error, CustomStringConvertible {
    case missing, header, decompression, checksum, blockTable, length

    package var description: String {
        switch self {
        case .missing: "a chunk is missing"
        case .header: "a chunk header is invalid"
        case .decompression: "a chunk does not decompress"
        case .checksum: "a chunk fails its checksum"
        case .blockTable: "a chunk's block digests do not match its bytes"
        case .length: "a chunk has the wrong length"
        }
    }
}
