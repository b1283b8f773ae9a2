import CacheToolCore
import Foundation

// cachetool: inspect and maintain a MediaCache store. See `cachetool --help`
// and Tools/README-cachetool.md.
exit(CacheTool(arguments: Array(CommandLine.arguments.dropFirst())).run())
