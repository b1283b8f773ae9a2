/// A small table-driven parser: global options, then (anywhere) a
/// subcommand from the table, its options and its positionals.
///
/// Accepts `--name value`, `--name=value`, `-x value`, grouped short
/// flags (`-jh`), `--` to end options, and `-` as a positional (stdin).
/// Options may come before or after the subcommand. Everything it
/// rejects is a ``UsageError``.
public struct ArgumentParser: Sendable {
    /// Options every command accepts.
    public let globalOptions: [OptionSpec]
    /// The subcommands.
    public let commands: [CommandSpec]

    public init(globalOptions: [OptionSpec], commands: [CommandSpec]) {
        self.globalOptions = globalOptions
        self.commands = commands
    }

    /// The command named `name`.
    public func command(named name: String) -> CommandSpec? {
        commands.first { $0.name == name }
    }

    /// Parses `arguments` (without the program name).
    public func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var options = globalOptions
        var index = 0
        var optionsEnded = false
        var loose: [String] = []

        func spec(long name: Substring) throws(UsageError) -> OptionSpec {
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option --\(name)", command: result.command?.name)
            }
            return spec
        }
        func spec(short letter: Character) throws(UsageError) -> OptionSpec {
            guard let spec = options.first(where: { $0.short == letter }) else {
                throw UsageError("unknown option -\(letter)", command: result.command?.name)
            }
            return spec
        }
        func record(_ spec: OptionSpec, value: String?) throws(UsageError) {
            if let value {
                if result.values[spec.name] != nil && !spec.repeatable {
                    throw UsageError("--\(spec.name) given twice", command: result.command?.name)
                }
                result.values[spec.name, default: []].append(value)
            } else {
                result.flags.insert(spec.name)
            }
        }

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                if result.command == nil && !optionsEnded {
                    guard let command = command(named: argument) else {
                        throw UsageError("unknown command '\(argument.prefix(80))'")
                    }
                    result.command = command
                    options = globalOptions + command.options
                } else {
                    loose.append(argument)
                }
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name = body.prefix { $0 != "=" }
                let spec = try spec(long: name)
                if name.count < body.count {
                    guard spec.takesValue else {
                        throw UsageError("--\(name) takes no value", command: result.command?.name)
                    }
                    try record(spec, value: String(body.dropFirst(name.count + 1)))
                } else if spec.takesValue {
                    guard index < arguments.count else {
                        throw UsageError(
                            "--\(name) needs a value (\(spec.valueName ?? "VALUE"))", command: result.command?.name)
                    }
                    try record(spec, value: arguments[index])
                    index += 1
                } else {
                    try record(spec, value: nil)
                }
                continue
            }
            // Short options: -x, -xVALUE, -x VALUE, -abc (flags).
            var letters = Substring(argument.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                let spec = try spec(short: letter)
                if spec.takesValue {
                    if !letters.isEmpty {
                        try record(spec, value: String(letters))
                    } else {
                        guard index < arguments.count else {
                            throw UsageError(
                                "-\(letter) needs a value (\(spec.valueName ?? "VALUE"))", command: result.command?.name
                            )
                        }
                        try record(spec, value: arguments[index])
                        index += 1
                    }
                    break
                }
                try record(spec, value: nil)
            }
        }

        if result.command == nil && optionsEnded, let first = loose.first {
            guard let command = command(named: first) else { throw UsageError("unknown command '\(first.prefix(80))'") }
            result.command = command
            loose.removeFirst()
        }
        guard let command = result.command else {
            if !loose.isEmpty { throw UsageError("unexpected argument '\(loose[0].prefix(80))'") }
            return result
        }
        if result.wantsHelp {
            result.positionals = loose
            return result
        }
        let required = command.positionals.filter(\.required).count
        let variadic = command.positionals.last?.variadic == true
        if loose.count < required {
            let missing = command.positionals[loose.count]
            throw UsageError("\(command.name) needs \(missing.name)", command: command.name)
        }
        if !variadic && loose.count > command.positionals.count {
            throw UsageError(
                "unexpected argument '\(loose[command.positionals.count].prefix(80))'", command: command.name)
        }
        result.positionals = loose
        return result
    }

    /// The help text of `command`, or the command list for `nil`.
    public func help(for command: CommandSpec?) -> String {
        func optionLines(_ specs: [OptionSpec]) -> [String] {
            specs.map { spec in
                var left = "  "
                left += spec.short.map { "-\($0), " } ?? "    "
                left += "--\(spec.name)"
                if let value = spec.valueName { left += " \(value)" }
                return left.padding(toLength: max(left.count + 2, 28), withPad: " ", startingAt: 0) + spec.help
            }
        }
        guard let command else {
            var lines = ["usage: cachetool [--store DIR] COMMAND [options] [arguments]", "", "commands:"]
            for command in commands {
                lines.append("  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary)
            }
            lines += ["", "global options:"] + optionLines(globalOptions)
            lines += [
                "", "'cachetool COMMAND --help' describes a command.",
                "exit status: 0 ok, 1 error, 2 usage, 3 corruption found.",
            ]
            return lines.joined(separator: "\n") + "\n"
        }
        var lines = ["usage: \(command.usageLine)", "", command.summary]
        if !command.details.isEmpty { lines += ["", command.details] }
        if !command.options.isEmpty { lines += ["", "options:"] + optionLines(command.options) }
        lines += ["", "global options:"] + optionLines(globalOptions)
        return lines.joined(separator: "\n") + "\n"
    }
}
