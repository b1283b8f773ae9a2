import Testing

@testable import CacheToolCore

/// The table-driven parser: what it accepts, and that everything else is
/// a usage error naming the problem.
@Suite struct ArgumentParserTests {
    let parser = CommandTable.parser

    @Test func globalOptionsGoBeforeOrAfterTheCommand() throws {
        for line in [
            ["--store", "/s", "cat", "k"], ["cat", "k", "--store", "/s"], ["cat", "--store=/s", "k"],
            ["-s", "/s", "cat", "k"], ["cat", "-s/s", "k"],
        ] {
            let parsed = try parser.parse(line)
            #expect(parsed.command?.name == "cat", "\(line)")
            #expect(parsed.value("store") == "/s", "\(line)")
            #expect(parsed.positionals == ["k"], "\(line)")
        }
    }

    @Test func optionValuesFlagsAndDashes() throws {
        let parsed = try parser.parse(["put", "--pin", "--expiry", "2h", "--mime=audio/mpeg", "key", "-"])
        #expect(parsed.flag("pin"))
        #expect(parsed.value("expiry") == "2h")
        #expect(parsed.value("mime") == "audio/mpeg")
        #expect(parsed.positionals == ["key", "-"])
        // `--` ends options: a key may start with a dash.
        let dashed = try parser.parse(["rm", "--", "--odd-key", "-x"])
        #expect(dashed.positionals == ["--odd-key", "-x"])
        // Grouped short flags.
        let grouped = try parser.parse(["readers", "-jh"])
        #expect(grouped.flag("json") && grouped.wantsHelp)
    }

    @Test func variadicPositionals() throws {
        #expect(try parser.parse(["rm", "a", "b", "c"]).positionals == ["a", "b", "c"])
        #expect(try parser.parse(["pin", "a"]).positionals == ["a"])
    }

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["cat"], "cat needs KEY"),
        (["cat", "a", "b"], "unexpected argument 'b'"),
        (["cat", "k", "--bogus"], "unknown option --bogus"),
        (["cat", "k", "-Z"], "unknown option -Z"),
        (["cat", "k", "--range"], "--range needs a value (A-B)"),
        (["stats", "--json=yes"], "--json takes no value"),
        (["stats", "--range", "1-2"], "unknown option --range"),
        (["put", "k"], "put needs FILE"),
        (["rm"], "rm needs KEY"),
        (["cat", "k", "--range", "1-2", "--range", "3-4"], "--range given twice"),
        (["import"], "import needs DIR"),
    ])
    func usageErrorsNameTheProblem(line: [String], message: String) {
        #expect(throws: UsageError.self) { try parser.parse(line) }
        do {
            _ = try parser.parse(line)
        } catch {
            #expect(error.message == message)
        }
    }

    @Test func helpNeedsNoPositionals() throws {
        let parsed = try parser.parse(["cat", "--help"])
        #expect(parsed.wantsHelp && parsed.command?.name == "cat")
        let text = parser.help(for: parsed.command)
        #expect(text.hasPrefix("usage: cachetool cat [options] KEY\n"))
        #expect(text.contains("--range A-B"))
        #expect(text.contains("--store DIR"))
        let overview = parser.help(for: nil)
        for command in CommandTable.commands { #expect(overview.contains("  \(command.name)")) }
    }

    @Test func everyCommandHasAUniqueNameAndOptions() {
        let names = CommandTable.commands.map(\.name)
        #expect(Set(names).count == names.count)
        for command in CommandTable.commands {
            let options = (CommandTable.globalOptions + command.options).map(\.name)
            #expect(Set(options).count == options.count, "\(command.name)")
            let shorts = (CommandTable.globalOptions + command.options).compactMap(\.short)
            #expect(Set(shorts).count == shorts.count, "\(command.name)")
            #expect(command.positionals.dropLast().allSatisfy { !$0.variadic })
        }
        let writers = Set(CommandTable.commands.filter(\.writes).map(\.name))
        #expect(
            writers == [
                "put", "rm", "pin", "unpin", "expire", "evict", "compact", "rekey", "import", "serve", "hls-get",
            ])
    }
}
