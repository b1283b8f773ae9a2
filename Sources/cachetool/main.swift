import CacheToolCore
import Foundation

// cachetool: inspect and maintain a MediaCache store. See `cachetool --help`
// and README.md, "cachetool: inspect and maintain a store".
exit(CacheTool(commandLine: CacheTool.currentCommandLine()).run())
