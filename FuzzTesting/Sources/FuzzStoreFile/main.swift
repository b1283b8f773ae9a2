import Foundation
import FuzzEntryPoints

#if canImport(Glibc)
    import Glibc
#endif

/// Arbitrary bytes as a store's `data.mdb`. The checks made before LMDB
/// maps the file run in this process (instrumented, so the fuzzer steers
/// by them) and must never crash. A file that passes them is then opened
/// and walked in a forked child (`FUZZ_STORE_OPEN=0` skips that), because
/// LMDB trusts its file and may fault: a child killed by SIGSEGV, SIGBUS,
/// SIGFPE or SIGABRT is counted as a contained LMDB fault; a Swift trap
/// (SIGILL, SIGTRAP), an ASan report or a hang is a failure of this
/// target. Files the checks refuse are opened in this process, where
/// opening must refuse them with the matching typed error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStoreFile(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let verdict = fuzzCrash { () throws(FuzzFailure) in
        try StoreFuzzing.checkStoreFile(Array(UnsafeRawBufferPointer(start: start, count: count)), directory: directory)
    }
    guard verdict == .passes else {
        fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.openStoreFile(verdict: verdict, directory: directory) }
        Outcomes.refused += 1
        return 0
    }
    guard openInChild else { return 0 }
    openInForkedChild()
    return 0
}

/// A directory of this process for the input under test.
let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("fuzz-store-file-\(getpid())")
let openInChild = ProcessInfo.processInfo.environment["FUZZ_STORE_OPEN"] != "0"

/// Counts of what happened to the inputs, printed when the process exits.
enum Outcomes {
    nonisolated(unsafe) static var refused = 0
    nonisolated(unsafe) static var opened = 0
    nonisolated(unsafe) static var faults: [Int32: Int] = [:]
    nonisolated(unsafe) static var registered = false

    static func registerReport() {
        guard !registered else { return }
        registered = true
        atexit {
            let faults = Outcomes.faults.sorted { $0.key < $1.key }.map {
                "\($0.value) \(String(cString: strsignal($0.key)))"
            }
            let line =
                "FuzzStoreFile outcomes: \(Outcomes.refused) refused before mapping, \(Outcomes.opened) opened in a child "
                + "without a fault, \(faults.reduce(0) { $0 + Int($1.split(separator: " ")[0])! }) LMDB faults contained"
                + (faults.isEmpty ? "" : " (\(faults.joined(separator: ", ")))") + "\n"
            FileHandle.standardError.write(Data(line.utf8))
            try? FileManager.default.removeItem(at: directory)
        }
    }
}

func openInForkedChild() {
    Outcomes.registerReport()
    fflush(nil)
    let pid = fork()
    precondition(pid >= 0, "fork failed")
    if pid == 0 {
        // LMDB faults end the child quietly instead of in ASan's handler.
        for signal in [SIGSEGV, SIGBUS, SIGFPE] { Glibc.signal(signal, SIG_DFL) }
        let null = open("/dev/null", O_WRONLY)
        dup2(null, STDOUT_FILENO)
        fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.openStoreFile(verdict: .passes, directory: directory) }
        _exit(42)
    }
    var status: Int32 = 0
    for _ in 0..<1_000 {  // 10 s
        if waitpid(pid, &status, WNOHANG) == pid { return classify(status) }
        usleep(10_000)
    }
    kill(pid, SIGKILL)
    waitpid(pid, &status, 0)
    preconditionFailure("opening the store hung for 10 s in the child")
}

func classify(_ status: Int32) {
    let signal = status & 0x7F
    if signal == 0 {
        let code = (status >> 8) & 0xFF
        precondition(code == 42, "the child opening the store exited with \(code) (an ASan report?)")
        Outcomes.opened += 1
    } else {
        precondition(
            ![SIGILL, SIGTRAP].contains(signal),
            "the child opening the store trapped (signal \(signal)): a Swift precondition")
        Outcomes.faults[signal, default: 0] += 1
    }
}
