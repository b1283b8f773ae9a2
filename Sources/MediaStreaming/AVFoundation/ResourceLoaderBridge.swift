#if canImport(AVFoundation) && !os(watchOS)
    import AVFoundation
    import Foundation

    /// Maps AVFoundation's loading requests onto ``LoadingRequest``s of a
    /// ``ResourceLoader`` and its answers back. Types only; no logic.
    // Unchecked: AVFoundation calls the delegate on `queue`, where all its state is used.
    final class ResourceLoaderBridge: NSObject, AVAssetResourceLoaderDelegate, @unchecked Sendable {
        /// The prefix of the custom scheme: letters and a hyphen only.
        static let schemePrefix = "mediacache-"

        let queue = DispatchQueue(label: "MediaStreaming.ResourceLoaderBridge")
        private let loader: ResourceLoader
        /// Our request for each of AVFoundation's, to pass cancellations on. Touched on `queue` only.
        private var requests: [ObjectIdentifier: LoadingRequest] = [:]

        init(loader: ResourceLoader) {
            self.loader = loader
        }

        /// `https://…` → `mediacache-https://…`.
        static func customURL(for url: URL) -> URL {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
            components.scheme = schemePrefix + (components.scheme ?? "https")
            return components.url ?? url
        }

        func resourceLoader(
            _ resourceLoader: AVAssetResourceLoader,
            shouldWaitForLoadingOfRequestedResource loadingRequest: AVAssetResourceLoadingRequest
        ) -> Bool {
            let avRequest = Unchecked(value: loadingRequest)
            let id = ObjectIdentifier(loadingRequest)
            let data = loadingRequest.dataRequest
            let request = LoadingRequest(
                contentInformation: loadingRequest.contentInformationRequest != nil,
                offset: data.map { Int($0.requestedOffset) },
                length: data.flatMap { $0.requestsAllDataToEndOfResource ? nil : $0.requestedLength }
            ) { [weak self] event in
                self?.queue.async {
                    let loadingRequest = avRequest.value
                    switch event {
                    case .contentInformation(let info):
                        if let content = loadingRequest.contentInformationRequest {
                            content.contentType = info.uniformTypeIdentifier
                            content.contentLength = Int64(info.contentLength)
                            content.isByteRangeAccessSupported = info.isByteRangeAccessSupported
                            content.isEntireLengthAvailableOnDemand = info.isEntireLengthAvailableOnDemand
                        }
                    case .data(let bytes):
                        loadingRequest.dataRequest?.respond(with: bytes)
                    case .finished:
                        self?.requests[id] = nil
                        loadingRequest.finishLoading()
                    case .failed(let error):
                        self?.requests[id] = nil
                        loadingRequest.finishLoading(with: error)
                    }
                }
            }
            requests[id] = request
            return loader.shouldWaitForLoading(of: request)
        }

        func resourceLoader(_ resourceLoader: AVAssetResourceLoader, didCancel loadingRequest: AVAssetResourceLoadingRequest) {
            if let request = requests.removeValue(forKey: ObjectIdentifier(loadingRequest)) {
                loader.didCancel(request)
            }
        }
    }

    /// Carries a value AVFoundation owns across the loader's tasks; it is only used on the bridge's queue.
    private struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
    }
#endif
