import Foundation
import MediaStore

/// cachetool: inspection and maintenance of a media store from the
/// command line. `run()` parses, dispatches and maps every failure to
/// a one-line message and an exit status (0 ok, 1 error, 2 usage,
/// 3 corruption).
public struct CacheTool {
    /// The JSON documents' schema tag; bumped only on incompatible changes.
    public static let schema = "cachetool/1"
    /// Set in the child that `verify` walks the store in.
    static let verifyChildVariable = "CACHETOOL_VERIFY_CHILD"

    let arguments: [String]
    /// Why the command line is refused before parsing (an argument not UTF-8).
    let argumentError: UsageError?
    let environment: [String: String]
    let console: Console
    /// The executable to re-run for `verify`'s child walk; `nil` walks in-process.
    let executablePath: String?

    public init(
        arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        console: Console = Console(), executablePath: String? = CacheTool.currentExecutable()
    ) {
        self.init(
            arguments: arguments, argumentError: nil, environment: environment, console: console,
            executablePath: executablePath)
    }

    private init(
        arguments: [String], argumentError: UsageError?, environment: [String: String], console: Console,
        executablePath: String?
    ) {
        self.arguments = arguments
        self.argumentError = argumentError
        self.environment = environment
        self.console = console
        self.executablePath = executablePath
    }

    /// A run of the command line as the OS gives it, bytes per argument
    /// (without the program name). An argument that is not valid UTF-8 is
    /// a usage error: as a String it would be repaired with U+FFFD, and two
    /// different keys (`cafe\xff`, `cafe\xfe`) would become one entry.
    public init(
        commandLine: [[UInt8]], environment: [String: String] = ProcessInfo.processInfo.environment,
        console: Console = Console(), executablePath: String? = CacheTool.currentExecutable()
    ) {
        var argumentError: UsageError?
        if let index = commandLine.firstIndex(where: { String(validating: $0, as: UTF8.self) == nil }) {
            let shown = commandLine[index].prefix(80).map { byte in
                (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
            }
            argumentError = UsageError(
                "argument \(index + 1) is not valid UTF-8 ('\(shown.joined())'); keys and paths must be UTF-8")
        }
        self.init(
            arguments: commandLine.map { String(decoding: $0, as: UTF8.self) }, argumentError: argumentError,
            environment: environment, console: console, executablePath: executablePath)
    }

    /// This process's command line, without the program name, as bytes.
    public static func currentCommandLine() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map { UInt8(bitPattern: $0) }
        }
    }

    /// This process's executable (`/proc/self/exe` on Linux).
    public static func currentExecutable() -> String? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        return Bundle.main.executablePath
    }

    /// Runs the command line; returns the exit status.
    public func run() -> Int32 {
        if let argumentError { return usage(argumentError) }
        let parsed: ParsedArguments
        do {
            parsed = try CommandTable.parser.parse(arguments)
        } catch {
            return usage(error)
        }
        guard let command = parsed.command else {
            if parsed.wantsHelp {
                console.print(CommandTable.parser.help(for: nil), terminator: "")
                return 0
            }
            console.printError(CommandTable.parser.help(for: nil).trimmingCharacters(in: .newlines))
            return 2
        }
        if parsed.wantsHelp {
            console.print(CommandTable.parser.help(for: command), terminator: "")
            return 0
        }
        // An empty --store is a mistake (an unset variable), not a request for the default store.
        if parsed.value("store")?.isEmpty == true {
            return usage(UsageError("--store needs a directory, not an empty string", command: command.name))
        }
        do {
            try dispatch(command.name, parsed)
            return 0
        } catch let error as UsageError {
            return usage(error)
        } catch let error as ToolError {
            if !error.message.isEmpty { console.printError("cachetool: \(error.message)") }
            return error.status
        } catch let error as StoreError {
            console.printError("cachetool: \(Self.message(for: error))")
            return Self.status(for: error)
        } catch let error as AdministrationError {
            console.printError("cachetool: \(error)")
            if case .store(let storeError) = error { return Self.status(for: storeError) }
            return 1
        } catch {
            console.printError("cachetool: \(error)")
            return 1
        }
    }

    private func usage(_ error: UsageError) -> Int32 {
        console.printError("cachetool: \(error.message)")
        console.printError("Try 'cachetool \(error.command.map { $0 + " " } ?? "")--help'.")
        return 2
    }

    private func dispatch(_ name: String, _ parsed: ParsedArguments) throws {
        switch name {
        case "stats": try stats(parsed)
        case "ls": try parsed.flag("hls") ? listHLS(parsed) : list(parsed)
        case "info": try info(parsed)
        case "cat": try cat(parsed)
        case "put": try put(parsed)
        case "rm": try remove(parsed)
        case "pin": try pin(parsed, true)
        case "unpin": try pin(parsed, false)
        case "expire": try expire(parsed)
        case "evict": try evict(parsed)
        case "verify": try verify(parsed)
        case "compact": try compact(parsed)
        case "rekey": try rekey(parsed)
        case "readers": try readers(parsed)
        case "export": try export(parsed)
        case "import": try importEntries(parsed)
        case "serve": try serve(parsed)
        case "hls-get": try downloadHLS(parsed)
        default: throw UsageError("unknown command '\(name)'")
        }
    }

    // MARK: The store

    /// `--store` (never empty: `run` refuses that), else `$MEDIACACHE_STORE`,
    /// else `$XDG_CACHE_HOME/mediacache`, else `~/.cache/mediacache`.
    func storeDirectory(_ parsed: ParsedArguments) -> URL {
        if let path = parsed.value("store"), !path.isEmpty { return URL(fileURLWithPath: path) }
        if let path = environment["MEDIACACHE_STORE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        if let path = environment["XDG_CACHE_HOME"], !path.isEmpty {
            return URL(fileURLWithPath: path).appendingPathComponent("mediacache")
        }
        let home =
            environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".cache/mediacache")
    }

    /// Opens the store: read-only unless `write`; a missing store is
    /// created only when `create`. A read-write open that moved a damaged
    /// store aside says so on standard error, naming the folder.
    func openStore(_ parsed: ParsedArguments, write: Bool = false, create: Bool = false) throws -> MediaStore {
        let directory = storeDirectory(parsed)
        if !create || !write {
            let data = directory.appendingPathComponent("data.mdb").path
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
                throw ToolError("no store at \(directory.path) (the directory does not exist; use --store DIR)")
            }
            if isDirectory.boolValue && !FileManager.default.fileExists(atPath: data) {
                throw ToolError("no store at \(directory.path) (no data.mdb in it)")
            }
        }
        let key = try storeKey(parsed)
        guard write else { return try MediaStore.openReadOnly(directory: directory, key: key) }
        var configuration = StoreConfiguration()
        configuration.encryption = key.map { StoreConfiguration.Encryption(key: $0) }
        let store = try MediaStore(directory: directory, configuration: configuration)
        // A damaged store was moved aside and replaced by an empty one: every entry seems gone, so say where.
        if let recovery = store.recovery { console.printError("cachetool: \(recovery)") }
        return store
    }

    /// The key of `--key-file`, if given.
    func storeKey(_ parsed: ParsedArguments) throws -> StoreKey? {
        guard let path = parsed.value("key-file") else { return nil }
        do {
            return try KeyFile.read(from: path)
        } catch {
            throw ToolError("--key-file: \(error)")
        }
    }

    static func message(for error: StoreError) -> String {
        switch error {
        case .unsupportedFormatVersion(let found, let supported):
            "the store has format version \(found), newer than this cachetool reads (version \(supported)); use a newer cachetool"
        case .encryptionMismatch(_, storeIsEncrypted: true): error.description + " (give its key with --key-file PATH)"
        default: error.description
        }
    }

    static func status(for error: StoreError) -> Int32 {
        switch error {
        case .corrupted, .damagedStore: 3
        default: 1
        }
    }

    /// Prints a JSON document with the schema tag and command name first.
    func printJSON(_ command: String, _ fields: [(String, JSONValue)]) {
        console.print(
            JSONValue.object([("schema", .string(Self.schema)), ("command", .string(command))] + fields).rendered())
    }
}

extension Console {
    func print(_ text: String, terminator: String) {
        write(Data((text + terminator).utf8))
    }
}
