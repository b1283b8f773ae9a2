import HLSPlaylist
import MediaStreaming

/// Decides the answer to a `GET` or `HEAD` from its header fields and the
/// representation (RFC 9110 §13 conditionals, §14 ranges). Pure.
///
/// - `If-Match` that fails: 412. `If-None-Match` that matches (weak
///   comparison), or, without it, `If-Modified-Since` equal to the entry's
///   `Last-Modified`: 304.
/// - `Range` only on `GET` (RFC 9110 §14.2), and only when `If-Range`
///   (if any) matches: an entity tag by strong comparison, a date by
///   exact equality with `Last-Modified`. An invalid `Range` is ignored.
/// - One satisfiable range (after merging overlaps): 206 with `Content-Range`.
///   None satisfiable: 416 with `Content-Range: bytes */length`.
/// - **Several disjoint ranges: 200 with the whole body** (RFC 9110 §14.2 lets
///   a server ignore `Range`); no `multipart/byteranges`. Players ask for
///   one range at a time; a whole 200 is always a correct answer.
public enum ResponsePlanner {
    public static func plan(method: String, request: HTTPRequest, representation: Representation) -> ResponsePlan {
        let length = representation.length
        var head = ResponseHead(status: 200)
        head.add("Content-Type", representation.mimeType)
        head.add("Accept-Ranges", "bytes")
        if let etag = representation.etag { head.add("ETag", etag) }
        if let lastModified = representation.lastModified { head.add("Last-Modified", lastModified) }
        // Parsed only for a conditional request.
        let currentTag = { representation.etag.flatMap { EntityTag($0) } }

        if let ifMatch = request.header("If-Match") {
            let current = currentTag()
            let matches =
                EntityTag.list(ifMatch).map { tags in
                    current.map { current in tags.contains { $0.strongMatches(current) } } ?? false
                } ?? true
            if !matches {
                var failed = ResponseHead(status: 412)
                failed.add("Content-Length", "0")
                return ResponsePlan(head: failed, body: nil)
            }
        }
        if let ifNoneMatch = request.header("If-None-Match") {
            let current = currentTag()
            let matches =
                EntityTag.list(ifNoneMatch).map { tags in
                    current.map { current in tags.contains { $0.weakMatches(current) } } ?? false
                } ?? true
            if matches { return notModified(head) }
        } else if let since = request.header("If-Modified-Since"), let lastModified = representation.lastModified,
            since.trimmingOWS() == lastModified
        {
            return notModified(head)
        }

        var selected: ByteRangeSet.Resolution?
        if method == "GET", let header = request.header("Range"), let set = ByteRangeSet.parse(header),
            ifRangeMatches(request.header("If-Range"), representation)
        {
            selected = set.resolve(length: length)
        }
        switch selected {
        case .single(let range):
            head.status = 206
            head.add("Content-Range", ContentRange(range: range, total: length).headerValue)
            head.add("Content-Length", String(range.count))
            return ResponsePlan(head: head, body: range)
        case .unsatisfiable:
            let message = Array("range not satisfiable: the length is \(length)\n".utf8)
            var refused = ResponseHead(status: 416)
            refused.add("Content-Range", ContentRange(range: nil, total: length).headerValue)
            refused.add("Content-Type", "text/plain; charset=utf-8")
            refused.add("Content-Length", String(message.count))
            return ResponsePlan(head: refused, body: nil, message: message)
        case .several, nil:
            head.add("Content-Length", String(length))
            return ResponsePlan(head: head, body: method == "HEAD" ? nil : 0..<length)
        }
    }

    private static func notModified(_ head: ResponseHead) -> ResponsePlan {
        var result = ResponseHead(status: 304)
        for field in head.fields where ["ETag", "Last-Modified"].contains(field.name) {
            result.add(field.name, field.value)
        }
        return ResponsePlan(head: result, body: nil)
    }

    /// RFC 9110 §13.1.5: no `If-Range`, or one that matches the representation.
    package static func ifRangeMatches(_ ifRange: String?, _ representation: Representation) -> Bool {
        guard let ifRange = ifRange?.trimmingOWS() else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            guard let tag = EntityTag(ifRange), let current = representation.etag.flatMap({ EntityTag($0) }) else {
                return false
            }
            return tag.strongMatches(current)
        }
        return representation.lastModified == ifRange
    }
}
