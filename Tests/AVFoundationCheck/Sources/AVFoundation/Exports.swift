// An API-shape stand-in for the part of AVFoundation that MediaStreaming's
// glue (Sources/MediaStreaming/AVFoundation) touches, so that the glue is
// compiled and exercised on Linux, where there is no Apple SDK. It lives in
// the check package Tests/AVFoundationCheck, built in its own scratch
// folder: no Apple build, no build of the root package and no user of the
// MediaStreaming product ever sees it.
//
// What it is:
// - Each declaration copies the Swift signature, optionality, availability
//   and isolation of Apple's current SDK as documented on the page cited
//   beside it. Objective-C classes are `open` with `open` members, as the
//   Clang importer imports them.
// - There is no Objective-C runtime on Linux: NSObject and NSObjectProtocol
//   are swift-corelibs-foundation's, and the `optional` requirements of
//   AVAssetResourceLoaderDelegate are ordinary requirements with defaults in
//   a protocol extension (what AVFoundation does when a delegate lacks the
//   method). One consequence: a method whose signature nearly matches a
//   requirement silently falls back to the default here, where Apple's
//   compiler warns; the behaviour tests catch that, because they only pass
//   when the glue's own methods answer.
// - Its objects behave as far as the glue can observe (currentOffset moves,
//   isFinished is set) and record what the glue does to them, for tests,
//   through `@_spi(StandIn)` members the glue cannot see (it does not
//   import the SPI). They also record what AVFoundation would refuse or
//   raise an exception for (a second finish, bytes before the content
//   information, a content type outside `allowedContentTypes` ...).
//
// Real AVFoundation re-exports Foundation; so does this module (with
// FoundationNetworking, where Linux keeps URLRequest, URLResponse and
// URLAuthenticationChallenge).
@_exported import Dispatch
@_exported import Foundation

#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
