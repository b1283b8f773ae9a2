import CacheToolCore

/// Entry points shared by the libFuzzer targets (FuzzTesting/) and the
/// test that replays their corpora: each takes arbitrary bytes and must
/// never crash, only accept or reject; a property that does not hold
/// throws ``FuzzFailure``.
public enum CacheToolFuzzing {
    /// Splits `bytes` on NUL into arguments and parses them, then runs the
    /// value parsers (sizes, ranges, expiry) on every argument. Returns
    /// whether the command line parsed.
    @discardableResult
    public static func parseArguments(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        for argument in arguments {
            _ = ByteSize.parse(argument)
            if let range = ByteRangeSpec.parse(argument) {
                for length in [nil, 0, 1, 1000, Int.max] {
                    if let resolved = range.resolve(length: length) {
                        try fuzzCheck(
                            resolved.lowerBound >= 0 && resolved.lowerBound <= resolved.upperBound,
                            "\(argument) resolves to \(resolved)")
                        if let length {
                            try fuzzCheck(resolved.upperBound <= length, "\(argument) resolves past \(length)")
                        }
                    }
                }
            }
            _ = ExpirySpec.parse(argument)
        }
        do {
            let parsed = try CommandTable.parser.parse(arguments)
            _ = CommandTable.parser.help(for: parsed.command)
            return true
        } catch {
            _ = error.message
            return false
        }
    }
}
