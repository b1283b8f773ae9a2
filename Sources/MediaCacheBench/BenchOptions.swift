import Foundation

/// Command-line options of `mediacache-bench`.
struct BenchOptions: Sendable {
    /// Print JSON instead of a Markdown table.
    var json = false
    /// Small workloads, for a smoke run of well under 30 seconds.
    var quick = false
    /// Where scratch stores are made; a fresh folder is created inside
    /// it and removed at the end. `nil`: a temporary folder under /tmp.
    var directory: String?
    /// Workload groups to run (`stream`, `small`, `large`, `range`,
    /// `churn`, `facade`, `playback`, `server`, `scheduling`, `hls`, `crypto`, `encrypted`, `scale`, `network`); empty runs all
    /// but `scale` and `network`.
    var only: Set<String> = []
    /// Entries of the `scale` group (default 1,000,000; 20,000 with `--quick`).
    var scaleEntries: Int?
    /// One-way delay of the `network` group's shaped link, in milliseconds.
    var networkDelayMilliseconds = 25.0
    /// Rate per connection of the `network` group's shaped link, in MB/s.
    var networkRate = 2.5

    /// Groups a plain run includes.
    static let defaultGroups = [
        "stream", "small", "large", "range", "churn", "facade", "playback", "server", "scheduling", "hls",
        "crypto", "encrypted",
    ]
    /// Every group; the ones not in ``defaultGroups`` run only when `--only` names them.
    static let groups = defaultGroups + ["scale", "network"]

    static let usage = """
        usage: mediacache-bench [--json] [--quick] [--dir PATH] [--only GROUP[,GROUP…]] [--scale-entries N]
                              [--delay-ms MS] [--rate MBPS]

          --json        print {"notes":[…],"results":[{"name","unit","value","baseline","baseline_value","ratio"}]}
                        instead of a Markdown table
          --quick       small workloads (a smoke run)
          --dir PATH    make scratch stores in a new folder inside PATH (removed at the end);
                        default: a temporary folder under /tmp
          --only LIST   run only these groups: \(groups.joined(separator: ", "))
                        (default: all but scale and network, which run only when named here)
          --scale-entries N
                        entries of the scale group (default 1,000,000, or 20,000 with --quick);
                        it needs about 4.5 KB of disk per entry
          --delay-ms MS one-way delay of the network group's shaped link (default 25, 0 to 1000)
          --rate MBPS   rate per connection of the network group's link in MB/s (default 2.5, 0.1 to 1000)

        The network group runs nginx behind Tools/shaping-proxy on loopback and compares
        with curl, aria2c, yt-dlp and ffmpeg (Tools/bootstrap installs them); a missing tool
        skips its row, or fails the run when MEDIACACHE_REQUIRE_TOOLS is set. Its generated
        media is kept between runs in mediacache-bench-assets next to the scratch folder.

        Progress goes to standard error; the report to standard output.
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--json": options.json = true
            case "--quick": options.quick = true
            case "--dir":
                guard let path = rest.popFirst(), !path.isEmpty else {
                    throw BenchUsageError(message: "--dir needs a path")
                }
                options.directory = path
            case "--only":
                guard let list = rest.popFirst() else {
                    throw BenchUsageError(message: "--only needs a list of groups")
                }
                for group in list.split(separator: ",").map(String.init) {
                    guard groups.contains(group) else { throw BenchUsageError(message: "unknown group \(group)") }
                    options.only.insert(group)
                }
            case "--scale-entries":
                guard let text = rest.popFirst(), let count = Int(text), count >= 10 else {
                    throw BenchUsageError(message: "--scale-entries needs a count of at least 10")
                }
                options.scaleEntries = count
            case "--delay-ms":
                guard let text = rest.popFirst(), let value = Double(text), (0...1000).contains(value) else {
                    throw BenchUsageError(message: "--delay-ms needs milliseconds from 0 to 1000")
                }
                options.networkDelayMilliseconds = value
            case "--rate":
                guard let text = rest.popFirst(), let value = Double(text), (0.1...1000).contains(value) else {
                    throw BenchUsageError(message: "--rate needs MB/s from 0.1 to 1000")
                }
                options.networkRate = value
            case "-h", "--help": throw BenchUsageError(message: nil)
            default: throw BenchUsageError(message: "unknown argument \(argument)")
            }
        }
        return options
    }

    /// Whether the group `name` should run.
    func runs(_ name: String) -> Bool {
        only.isEmpty ? Self.defaultGroups.contains(name) : only.contains(name)
    }
}

/// A bad command line; `message` is `nil` when help was asked for.
struct BenchUsageError: Error {
    var message: String?
}
