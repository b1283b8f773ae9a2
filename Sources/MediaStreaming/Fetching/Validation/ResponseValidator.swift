import Foundation

/// Decides whether an origin response's bytes are the ones asked for and
/// belong to the version of the resource being cached. Pure: no I/O, no
/// state; the fetcher acts on its answers.
///
/// - A range request of a known resource must be answered `206` with a
///   `Content-Range` that starts where it was asked, ends where asked (or
///   on a chunk boundary before), and has the known total; or `200` with
///   the whole resource of the known length. Validators present on both
///   sides must agree (``ResourceValidators/contradicts(_:)``). Another
///   length or validator is ``StreamingError/resourceChanged(url:)``; a
///   wrong `Content-Range` is ``OriginError/contentRangeMismatch(requested:received:)``;
///   any other status is ``OriginError/httpStatus(code:url:)``.
/// - The first response for a resource gives its length and validators;
///   `304` is accepted only for a conditional request.
/// - A body with a `Content-Encoding` other than `identity` is refused
///   (``OriginError/contentEncoded(_:)``): its length and ranges count
///   encoded bytes, which are not the resource's.
package enum ResponseValidator {
    /// Checks the first response for a resource (asked with `requested`,
    /// starting at 0); `conditional` when it carried the stored entry's
    /// validators.
    static func checkFirst(
        _ response: OriginResponse, requested: Range<Int>, conditional: Bool, url: URL
    ) throws(StreamingError) -> FirstResponse {
        let validators = ResourceValidators(of: response)
        if let encoding = response.contentEncoding, response.statusCode == 200 || response.statusCode == 206 {
            throw .origin(.contentEncoded(encoding))
        }
        switch response.statusCode {
        case 304:
            guard conditional else { throw .origin(.httpStatus(code: 304, url: url)) }
            return .notModified
        case 206:
            guard let contentRange = response.contentRange, let range = contentRange.range,
                range.lowerBound == requested.lowerBound, let total = contentRange.total
            else {
                throw .origin(
                    .contentRangeMismatch(
                        requested: rangeText(requested), received: response.header("Content-Range") ?? "none"))
            }
            return .content(
                total: total,
                body: ExpectedBody(start: range.lowerBound, end: range.upperBound, isWholeResource: false),
                validators: validators)
        case 200:
            let total = response.contentLength
            return .content(
                total: total, body: ExpectedBody(start: 0, end: total, isWholeResource: true), validators: validators)
        default:
            throw .origin(.httpStatus(code: response.statusCode, url: url))
        }
    }

    /// Checks the response to a range request of a resource whose
    /// `length` and `validators` are known; returns where its body lies.
    static func checkRange(
        _ response: OriginResponse, requested: Range<Int>, length: Int, validators: ResourceValidators,
        chunkSize: Int, url: URL
    ) throws(StreamingError) -> ExpectedBody {
        if let encoding = response.contentEncoding, response.statusCode == 200 || response.statusCode == 206 {
            throw .origin(.contentEncoded(encoding))
        }
        switch response.statusCode {
        case 206:
            if validators.contradicts(ResourceValidators(of: response)) { throw .resourceChanged(url: url) }
            guard let contentRange = response.contentRange, let range = contentRange.range else {
                throw .origin(
                    .contentRangeMismatch(
                        requested: rangeText(requested), received: response.header("Content-Range") ?? "none"))
            }
            if let total = contentRange.total, total != length { throw .resourceChanged(url: url) }
            let wantedEnd = min(requested.upperBound, length)
            guard range.lowerBound == requested.lowerBound, range.upperBound <= requested.upperBound,
                range.upperBound == wantedEnd || range.upperBound % chunkSize == 0
            else {
                throw .origin(
                    .contentRangeMismatch(
                        requested: rangeText(requested), received: response.header("Content-Range") ?? ""))
            }
            return ExpectedBody(start: range.lowerBound, end: range.upperBound, isWholeResource: false)
        case 200:
            if validators.contradicts(ResourceValidators(of: response)) { throw .resourceChanged(url: url) }
            if let announced = response.contentLength, announced != length { throw .resourceChanged(url: url) }
            return ExpectedBody(start: 0, end: length, isWholeResource: true)
        case 416:
            // `bytes */total` with another total: the resource shrank under us.
            if let total = response.contentRange?.total, total != length { throw .resourceChanged(url: url) }
            throw .origin(.httpStatus(code: 416, url: url))
        default:
            throw .origin(.httpStatus(code: response.statusCode, url: url))
        }
    }

    /// Checks the answer to a request of exactly `requested` of a resource
    /// whose length is not known (an HLS byte range): `206` with exactly
    /// that `Content-Range`, or `200` with the whole resource, whose body
    /// starts at 0. Any other status is ``OriginError/httpStatus(code:url:)``.
    package static func checkExactRange(
        _ response: OriginResponse, requested: Range<Int>, url: URL
    ) throws(StreamingError) -> ExpectedBody {
        switch response.statusCode {
        case 206:
            guard let received = response.contentRange, received.range == requested else {
                throw .origin(
                    .contentRangeMismatch(
                        requested: rangeText(requested), received: response.header("Content-Range") ?? "none"))
            }
            return ExpectedBody(start: requested.lowerBound, end: requested.upperBound, isWholeResource: false)
        case 200:
            return ExpectedBody(start: 0, end: response.contentLength, isWholeResource: true)
        default:
            throw .origin(.httpStatus(code: response.statusCode, url: url))
        }
    }

    /// What to do with a stored entry (its length, validators and whether
    /// it expired) given the first response's `total` and `validators`.
    /// Lengths known on both sides must agree, and the stored entry's main
    /// validator (the ETag, else `Last-Modified`) must be the response's:
    /// an entry whose validator cannot be confirmed is replaced.
    static func storedEntryAction(
        storedLength: Int?, storedValidators: ResourceValidators, storedIsExpired: Bool, total: Int?,
        validators: ResourceValidators
    ) -> StoredEntryAction {
        let lengthChanged = storedLength != nil && total != nil && storedLength != total
        let old = storedValidators.etag ?? storedValidators.lastModified
        let new = validators.etag ?? validators.lastModified
        if lengthChanged || old != new { return .replace }
        return storedIsExpired ? .renew : .keep
    }

    /// The `If-Range` value for a range request of the version with
    /// `validators`: its strong ETag, else none (RFC 9110 §13.1.5 forbids
    /// weak ETags, and dates that are not known to be strong; the response
    /// is then judged by its length and validators alone).
    static func ifRange(for validators: ResourceValidators) -> String? {
        validators.hasStrongETag ? validators.etag : nil
    }

    /// `requested` as a `Range` header value, for error messages.
    static func rangeText(_ requested: Range<Int>) -> String {
        requested.upperBound == Int.max
            ? "bytes=\(requested.lowerBound)-" : "bytes=\(requested.lowerBound)-\(requested.upperBound - 1)"
    }
}
