/// The table of cachetool's commands and options: the single source of
/// what the parser accepts and what `--help` prints.
public enum CommandTable {
    static let json = OptionSpec("json", short: "j", help: "print JSON (a stable schema, see the cachetool article)")
    static let holder = OptionSpec("holder", value: "NAME", help: "the holder (default: app, the app's own)")

    /// Options every command accepts.
    public static let globalOptions: [OptionSpec] = [
        OptionSpec(
            "store", short: "s", value: "DIR", help: "the store (default: $MEDIACACHE_STORE, then ~/.cache/mediacache)"),
        OptionSpec(
            "key-file", value: "PATH",
            help: "the key of an encrypted store: 32 bytes or 64 hex digits, in a file only its owner can read"),
        OptionSpec("help", short: "h", help: "describe the command"),
    ]

    /// Every subcommand.
    public static let commands: [CommandSpec] = [
        CommandSpec(
            "stats", summary: "totals: entries, bytes, compression, dedup, map and file use, readers",
            options: [json]),
        CommandSpec(
            "ls", summary: "list entries",
            options: [
                OptionSpec("prefix", value: "TEXT", help: "only keys starting with TEXT"),
                OptionSpec("match", value: "GLOB", help: "only keys matching the shell pattern GLOB"),
                OptionSpec("sort", value: "FIELD", help: "key (default), size, access or expiry"),
                OptionSpec("reverse", short: "r", help: "reverse the order"),
                OptionSpec("complete", help: "only complete entries"),
                OptionSpec("partial", help: "only partial entries"),
                OptionSpec("hls", help: "HLS assets instead: one line per asset, then one per media playlist"),
                json,
            ],
            details: """
                Columns: cached bytes / length, flags (C complete, P pinned, X expired), last access, expiry, key. \
                With --hls: entries, bytes, flags and the master playlist's key per asset; under it, per media \
                playlist, stored / total segments, its role (variant, AUDIO, SUBTITLES) and key.
                """),
        CommandSpec(
            "info", summary: "everything about one entry: metadata, cached ranges, digest, chunk sharing",
            positionals: [PositionalSpec("KEY")], options: [json]),
        CommandSpec(
            "cat", summary: "write an entry's bytes to standard output",
            positionals: [PositionalSpec("KEY")],
            options: [
                OptionSpec("range", value: "A-B", help: "only bytes A through B (inclusive; A- and -N work too)")
            ],
            details: "Streams chunk by chunk. A partial entry can be read where it is cached."),
        CommandSpec(
            "put", summary: "store FILE (or standard input, -) under KEY",
            positionals: [PositionalSpec("KEY"), PositionalSpec("FILE")],
            options: [
                OptionSpec("expiry", value: "WHEN", help: "never, a duration (90s, 15m, 2h, 7d) or an ISO 8601 date"),
                OptionSpec("mime", value: "TYPE", help: "the MIME type, e.g. audio/mpeg"),
                OptionSpec("pin", help: "pin the entry (never evicted)"),
            ],
            writes: true),
        CommandSpec(
            "rm", summary: "remove entries (the key of an HLS asset's master playlist: the whole asset)",
            positionals: [PositionalSpec("KEY", variadic: true)], writes: true),
        CommandSpec(
            "pin", summary: "pin entries (eviction skips them)", positionals: [PositionalSpec("KEY", variadic: true)],
            options: [holder], writes: true,
            details: """
                An entry is kept while anyone holds it: the app (the default holder), a download \
                queue's download, an HLS asset. `info` and `ls` show the holders.
                """),
        CommandSpec(
            "unpin", summary: "release the holds of --holder (the app's by default) on entries",
            positionals: [PositionalSpec("KEY", variadic: true)], options: [holder], writes: true,
            details: "An entry other holders hold stays kept; unpin says who still holds it."),
        CommandSpec("expire", summary: "remove every expired entry", options: [json], writes: true),
        CommandSpec(
            "evict", summary: "evict least recently used entries down to SIZE stored bytes",
            options: [OptionSpec("to", value: "SIZE", help: "the target, e.g. 500M or 2GiB (required)"), json],
            writes: true),
        CommandSpec(
            "verify", summary: "re-check every checksum, content digest, reference count and counter",
            options: [json],
            details: """
                Exit status 3 when anything is corrupt, naming what. The walk runs in a child \
                process, so a damaged file that makes LMDB fault is reported too.
                """),
        CommandSpec(
            "compact", summary: "rewrite data.mdb without free pages (LMDB copy with compaction), then swap",
            options: [json], writes: true,
            details: "Refuses while any other process has the store open; stores opened meanwhile wait."),
        CommandSpec(
            "rekey", summary: "re-encrypt an encrypted store under the key of --new-key-file",
            options: [
                OptionSpec(
                    "new-key-file", value: "PATH", help: "the new key, in a key file as --key-file's (required)"),
                json,
            ],
            writes: true,
            details: """
                --key-file gives the store's key. Runs in steps of a bounded size, each committed on its own: \
                killed, the store opens with either key and a second run with the same new key resumes. \
                Refuses while another process has the store open (exit status 1); once done, the old key \
                opens it no more.
                """),
        CommandSpec(
            "readers", summary: "list LMDB reader slots; --clear frees those of dead processes",
            options: [OptionSpec("clear", help: "clear stale slots (mdb_reader_check)"), json]),
        CommandSpec(
            "export", summary: "write complete entries as plain files plus manifest.json into DIR",
            positionals: [PositionalSpec("DIR")],
            options: [OptionSpec("prefix", value: "TEXT", help: "only keys starting with TEXT"), json]),
        CommandSpec(
            "import", summary: "store the entries of an export in DIR (checking each digest)",
            positionals: [PositionalSpec("DIR")], options: [json], writes: true,
            details: """
                Every field of every entry is checked first: key, file, length and contentDigest are required; \
                length and cost are integers from 0 to 2^63-1; expiry an ISO 8601 date or null; pinned true or \
                false; text must be UTF-8. Each file must be a regular file inside DIR (after symlinks) of \
                exactly its length. An entry that fails is skipped and named on standard error (entries count \
                from 1), the others are imported, and the exit status is 1. A manifest that is not JSON, not \
                UTF-8 or of another schema is refused whole.
                """),
        CommandSpec(
            "serve", summary: "play the store to any player over loopback HTTP (MediaServer)",
            options: [
                OptionSpec("port", value: "N", help: "the port (default: one the OS picks)"),
                OptionSpec(
                    "origin-allow", value: "PATTERN", repeatable: true,
                    help:
                        "also fetch origins matching PATTERN: host (ports 80/443), host:port, [v6]:port, *.domain or a URL prefix"
                ),
                OptionSpec("print-url", value: "URL", repeatable: true, help: "print the local URL that plays URL"),
                OptionSpec("secret", value: "TEXT", help: "the secret in local URLs (default: random per run)"),
                OptionSpec("idle-exit", value: "SECONDS", help: "exit after SECONDS without any open connection"),
                OptionSpec("lan", help: "listen on every interface, not only 127.0.0.1 (see SECURITY.md: a risk)"),
            ],
            writes: true,
            details: """
                Prints one local URL per --print-url, in order, then serves until killed (or idle for \
                --idle-exit seconds). Bytes come from the store, missing ones from the origin (and are kept). \
                Example: cachetool serve --print-url https://host/a.mp3 | (read url; ffplay -autoexit "$url")
                """),
        CommandSpec(
            "hls-get", summary: "download an HLS asset (a variant and renditions) into the store, pinned",
            positionals: [PositionalSpec("URL")],
            options: [
                OptionSpec("max-bandwidth", value: "BPS", help: "the highest variant at most BPS (default: the first)"),
                OptionSpec("audio", value: "LANGS", help: "auto (default), all, none or languages: en,fr"),
                OptionSpec("subtitles", value: "LANGS", help: "none (default), auto, all or languages"),
                OptionSpec("parallel", value: "N", help: "resources fetched at once (default 4)"),
                OptionSpec(
                    "header", value: "NAME: VALUE", repeatable: true,
                    help: "send this header with every request to the URL's own origin (never to another)"),
                json,
            ],
            writes: true,
            details: """
                Resumes: what the store holds is not fetched again, so running it again after an interruption \
                fetches only what is missing, and again with more --audio languages only what they add. \
                Prints a progress line per resource (resources, segments, seconds, bytes). Live playlists \
                and SAMPLE-AES/FairPlay are refused (exit status 1).
                """),
    ]

    /// The parser over this table.
    public static let parser = ArgumentParser(globalOptions: globalOptions, commands: commands)
}
