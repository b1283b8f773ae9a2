// The module is empty on Linux: only the check package
// Tests/AVFoundationCheck compiles this there (with AVFOUNDATION_STAND_IN,
// against its API stand-in of AVFoundation).
#if canImport(AVFoundation) && !os(watchOS) && (!os(Linux) || AVFOUNDATION_STAND_IN)
    import AVFoundation
    import Foundation
    import MediaStreaming

    /// Maps AVFoundation's loading requests onto ``LoadingRequest``s of a
    /// ``ResourceLoader`` and its answers back; the loading itself is the
    /// loader's (platform-neutral and tested on its own).
    ///
    /// AVFoundation calls it on ``queue``, and every answer (content
    /// information, bytes, finish) is given on ``queue`` too, never after
    /// `resourceLoader(_:didCancel:)` for the same request.
    // Unchecked: AVFoundation calls the delegate on `queue`, where all its state is used.
    final class ResourceLoaderBridge: NSObject, AVAssetResourceLoaderDelegate, @unchecked Sendable {
        /// The prefix of the custom scheme: letters and a hyphen only.
        static let schemePrefix = "mediacache-"

        /// One of our requests and the number that tells it from a later
        /// request AVFoundation may make at the same address.
        private struct Entry {
            let serial: Int
            let request: LoadingRequest
        }

        let queue = DispatchQueue(label: "MediaStreaming.ResourceLoaderBridge")
        private let loader: ResourceLoader
        /// Our request for each of AVFoundation's still in progress. Touched on `queue` only.
        private var requests: [ObjectIdentifier: Entry] = [:]
        /// Touched on `queue` only.
        private var nextSerial = 0

        init(loader: ResourceLoader) {
            self.loader = loader
        }

        /// `https://…` → `mediacache-https://…`; the rest of the URL
        /// (user info, port, percent-escapes, query) is kept as it is.
        static func customURL(for url: URL) -> URL {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
            components.scheme = schemePrefix + (components.scheme ?? "https")
            return components.url ?? url
        }

        /// `mediacache-https://…` → `https://…`; `nil` for a URL of another scheme.
        static func originalURL(for url: URL) -> URL? {
            guard let scheme = url.scheme, scheme.lowercased().hasPrefix(schemePrefix),
                scheme.count > schemePrefix.count,
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return nil }
            components.scheme = String(scheme.dropFirst(schemePrefix.count))
            return components.url
        }

        func resourceLoader(
            _ resourceLoader: AVAssetResourceLoader,
            shouldWaitForLoadingOfRequestedResource loadingRequest: AVAssetResourceLoadingRequest
        ) -> Bool {
            // Only our own scheme: anything else (a key request, say) is not ours to answer.
            guard let url = loadingRequest.request.url, Self.originalURL(for: url) != nil else { return false }
            let avRequest = Unchecked(value: loadingRequest)
            let id = ObjectIdentifier(loadingRequest)
            nextSerial += 1
            let serial = nextSerial
            let data = loadingRequest.dataRequest
            let request = LoadingRequest(
                contentInformation: loadingRequest.contentInformationRequest != nil,
                offset: data.map { Int($0.requestedOffset) },
                length: data.flatMap { $0.requestsAllDataToEndOfResource ? nil : $0.requestedLength }
            ) { [weak self] event in
                guard let self else { return }
                self.queue.async { self.answer(avRequest.value, id: id, serial: serial, with: event) }
            }
            requests[id] = Entry(serial: serial, request: request)
            return loader.shouldWaitForLoading(of: request)
        }

        func resourceLoader(
            _ resourceLoader: AVAssetResourceLoader, didCancel loadingRequest: AVAssetResourceLoadingRequest
        ) {
            if let entry = requests.removeValue(forKey: ObjectIdentifier(loadingRequest)) {
                loader.didCancel(entry.request)
            }
        }

        /// Passes one answer of the loader on to AVFoundation's request. On `queue`.
        private func answer(
            _ loadingRequest: AVAssetResourceLoadingRequest, id: ObjectIdentifier, serial: Int, with event: LoadingEvent
        ) {
            // Cancelled (or finished) meanwhile: AVFoundation wants nothing more for it.
            guard requests[id]?.serial == serial, !loadingRequest.isCancelled, !loadingRequest.isFinished else {
                return
            }
            switch event {
            case .contentInformation(let info):
                guard let content = loadingRequest.contentInformationRequest else { return }
                let type = info.uniformTypeIdentifier
                // AVFoundation raises when contentType is outside allowedContentTypes; nil is allowed.
                let allowed = content.allowedContentTypes.map { $0.contains(type) } ?? true
                content.contentType = allowed ? type : nil
                content.contentLength = Int64(info.contentLength)
                content.isByteRangeAccessSupported = info.isByteRangeAccessSupported
                content.isEntireLengthAvailableOnDemand = info.isEntireLengthAvailableOnDemand
            case .data(let bytes):
                loadingRequest.dataRequest?.respond(with: bytes)
            case .finished:
                requests[id] = nil
                loadingRequest.finishLoading()
            case .failed(let error):
                requests[id] = nil
                loadingRequest.finishLoading(with: error)
            }
        }
    }

    /// Carries a value AVFoundation owns across the loader's tasks; it is only used on the bridge's queue.
    private struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
    }
#endif
