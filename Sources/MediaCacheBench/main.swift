import Foundation

// mediacache-bench: the MediaStore engine against raw LMDB and a
// file-per-key cache, in one run on the same data.
//
//   swift run -c release --scratch-path .build-release mediacache-bench [--json] [--quick] [--dir PATH]

let options: BenchOptions
do {
    options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message {
        FileHandle.standardError.write(Data("mediacache-bench: \(message)\n\n\(BenchOptions.usage)\n".utf8))
        exit(2)
    }
    print(BenchOptions.usage)
    exit(0)
}

do {
    let runner = try BenchmarkRunner(options: options)
    let report = try runner.run()
    print(options.json ? report.json() : report.markdown())
    if !runner.problems.isEmpty { exit(1) }
} catch {
    FileHandle.standardError.write(Data("mediacache-bench: \(error)\n".utf8))
    exit(1)
}
