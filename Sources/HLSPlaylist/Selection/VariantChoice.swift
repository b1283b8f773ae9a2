/// How to choose one variant of a master playlist.
public struct VariantChoice: Sendable {
    let pick: @Sendable ([VariantStream]) -> VariantStream?

    /// A choice from any function of the variants (nil: none fits).
    public init(_ pick: @escaping @Sendable ([VariantStream]) -> VariantStream?) {
        self.pick = pick
    }

    /// The first variant listed: the one a client starts with (RFC 8216 section 6.3.1).
    public static let first = VariantChoice { $0.first }

    /// The variant with the highest `BANDWIDTH` among those `predicate`
    /// accepts; of equal ones, the first listed.
    public static func highestBandwidth(
        where predicate: @escaping @Sendable (VariantStream) -> Bool = { _ in true }
    ) -> VariantChoice {
        VariantChoice { variants in
            variants.filter(predicate).reduce(nil) { best, variant in
                guard let best, best.bandwidth >= variant.bandwidth else { return variant }
                return best
            }
        }
    }

    /// The variant with the highest `BANDWIDTH` at most `limit` bits per second.
    public static func highestBandwidth(atMost limit: Int) -> VariantChoice {
        highestBandwidth { $0.bandwidth <= limit }
    }

    /// The variant with the lowest `BANDWIDTH`; of equal ones, the first listed.
    public static let lowestBandwidth = VariantChoice { variants in
        variants.reduce(nil) { best, variant in
            guard let best, best.bandwidth <= variant.bandwidth else { return variant }
            return best
        }
    }
}
