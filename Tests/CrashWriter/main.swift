import Foundation
import MediaStore

// crash-writer: the child process of the crash-safety test (issue 2,
// point 10) and its checker. See CrashRun and CrashCheck.
//
//   crash-writer <storeDir> <seed> <ackFile> [maxOperations]
//       Writes through the public API until killed (or for maxOperations),
//       logging each operation before it starts and acknowledging it
//       (fsynced) once it returned.
//   crash-writer check <storeDir> <ackFile>
//       Checks the store against the log after the writer died; exits 0
//       (and records the resolved state in the log) or 1 with the problems.
//   crash-writer group <storeDir> <seed> <ackFile> [maxPutsPerThread]
//       Puts from several threads at once (group commits) until killed,
//       logging each key once its put returned (GroupRun).
//   crash-writer group-check <storeDir> <ackFile>
//       Every logged key is in the store with its bytes; exits 0 or 1.
//   crash-writer app <storeDir> <close|hang>
//       An app for the recovery tests (see RecoveryApp).
//   crash-writer open <storeDir> [killAfterMicroseconds]
//       Opens the store for writing (upgrading an older format) and closes
//       it: the child of the upgrade's crash test. Prints how many
//       microseconds the open and close took; given a delay, SIGKILLs itself
//       that long after the open began (the kill lands where the child is,
//       however busy the parent is).
//   crash-writer rekey <storeDir> <fromKeyHex> <toKeyHex> <0|1> <killStep> <killAfterMicroseconds>
//       Opens the store with the first key (0) or the second (1), rekeys it
//       to the second and SIGKILLs itself that long after step killStep
//       (RekeyRun). Exits 0 when the rekey finished first, 3 on a wrong key.

let arguments = Array(CommandLine.arguments.dropFirst())

func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            """
            usage: crash-writer <storeDir> <seed> <ackFile> [maxOperations]
                   crash-writer check <storeDir> <ackFile>
                   crash-writer group <storeDir> <seed> <ackFile> [maxPutsPerThread]
                   crash-writer group-check <storeDir> <ackFile>
                   crash-writer app <storeDir> <close|hang>
                   crash-writer open <storeDir> [killAfterMicroseconds]
                   crash-writer rekey <storeDir> <fromKeyHex> <toKeyHex> <0|1> <killStep> <killAfterMicroseconds>

            """.utf8))
    exit(64)
}

if arguments.first == "check" {
    guard arguments.count == 3 else { usage() }
    exit(CrashCheck(directory: URL(fileURLWithPath: arguments[1]), logPath: arguments[2]).run())
}

if arguments.first == "group" {
    guard arguments.count == 4 || arguments.count == 5, let seed = UInt64(arguments[2]) else { usage() }
    let maxPuts = arguments.count == 5 ? Int(arguments[4]) : nil
    exit(GroupRun.run(directory: arguments[1], seed: seed, logPath: arguments[3], maxPuts: maxPuts))
}

if arguments.first == "group-check" {
    guard arguments.count == 3 else { usage() }
    exit(GroupCheck.run(directory: arguments[1], logPath: arguments[2]))
}

if arguments.first == "app" {
    guard arguments.count == 3, ["close", "hang"].contains(arguments[2]) else { usage() }
    exit(RecoveryApp.run(directory: arguments[1], mode: arguments[2]))
}

if arguments.first == "rekey" {
    guard arguments.count == 7, let openWith = Int(arguments[4]), let killStep = Int(arguments[5]),
        let killAfter = UInt32(arguments[6])
    else { usage() }
    exit(
        RekeyRun.run(
            directory: arguments[1], keys: [arguments[2], arguments[3]], openWith: openWith, killStep: killStep,
            killAfter: killAfter))
}

if arguments.first == "open" {
    guard arguments.count == 2 || arguments.count == 3 else { usage() }
    let killAfter = arguments.count == 3 ? UInt32(arguments[2]) : nil
    if arguments.count == 3, killAfter == nil { usage() }
    do {
        let started = DispatchTime.now()
        if let killAfter {
            Thread {
                usleep(killAfter)
                kill(getpid(), SIGKILL)
            }.start()
        }
        try MediaStore(directory: URL(fileURLWithPath: arguments[1])).close()
        let elapsed = (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000
        print(elapsed)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("crash-writer: \(error)\n".utf8))
        exit(2)
    }
}

guard arguments.count == 3 || arguments.count == 4, let seed = UInt64(arguments[1]) else { usage() }
let maxOperations = arguments.count == 4 ? Int(arguments[3]) : nil
do {
    let run = try CrashRun(directory: arguments[0], seed: seed, logPath: arguments[2])
    try run.run(maxOperations: maxOperations)
} catch {
    FileHandle.standardError.write(Data("crash-writer: \(error)\n".utf8))
    exit(2)
}
