import CacheToolCore
import Foundation

// cachetool: inspect and maintain a MediaCache store. See `cachetool --help`
// and Sources/MediaStore/MediaStore.docc/CacheTool.md.
exit(CacheTool(commandLine: CacheTool.currentCommandLine()).run())
