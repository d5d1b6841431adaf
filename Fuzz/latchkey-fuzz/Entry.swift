// latchkey-fuzz: libFuzzer targets for the query decoder, the backup parser, the CLI's argument parser,
// the agent's message decoder, and the certificate and PKCS #12 parsers.
//
// Built with script/fuzz (-sanitize=fuzzer,address -D FUZZING) it is a libFuzzer binary: its main hands
// over to libFuzzer's driver, the target named by LATCHKEY_FUZZ_TARGET. Built normally it replays inputs —
// `latchkey-fuzz <target> <file or directory>...` — which is how the tests run the committed corpus and
// every crash found so far.
import Foundation

#if FUZZING
    /// libFuzzer's entry for programs with their own main (SwiftPM names the executable's entry point itself).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    @main
    enum Fuzz {
        static func main() {
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            // One-time global set-up (OpenSSL's legacy provider, loaded on the first PKCS #12 file) happens here,
            // before the driver, so the leak check of the first input does not count it.
            FuzzTargets.run("pkcs12", Data())
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
                    let target = ProcessInfo.processInfo.environment["LATCHKEY_FUZZ_TARGET"] ?? "query"
                    FuzzTargets.run(target, bytes.map { Data(bytes: $0, count: count) } ?? Data())
                    return 0
                })
        }
    }
#else
    @main
    enum Replay {
        static func main() throws {
            let arguments = CommandLine.arguments.dropFirst()
            if arguments.first == "--write-seeds", arguments.count == 2 {
                try Seeds.write(to: arguments.last!)
                return
            }
            guard let target = arguments.first, FuzzTargets.names.contains(target), arguments.count >= 2 else {
                FileHandle.standardError.write(
                    Data(
                        "usage: latchkey-fuzz <\(FuzzTargets.names.joined(separator: "|"))> <file or directory>...\n"
                            .utf8))
                exit(64)
            }
            var count = 0
            for path in arguments.dropFirst() {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
                let files =
                    isDirectory.boolValue
                    ? try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
                    : [path]
                for file in files {
                    FuzzTargets.run(target, try Data(contentsOf: URL(fileURLWithPath: file)))
                    count += 1
                }
            }
            print("\(target): \(count) inputs replayed")
        }
    }
#endif
