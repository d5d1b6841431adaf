import Foundation
import LatchkeyTestSupport
import Testing

/// Every input of the committed fuzz corpus (seeds, and each crash the fuzzer found once fixed) replays
/// through the fifteen fuzz targets without a crash. The fuzzing itself is `script/fuzz`.
@Suite(.dedicatedThreads) struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus").path

    @Test(
        arguments: [
            "query", "backup", "snapshot", "cli", "agent", "certificate", "pkcs12", "pem", "ssh", "tpm-policy",
            "keyring", "kdbx",
            "kdbx-xml", "inflate", "csv",
        ])
    func theCorpusReplaysCleanly(_ target: String) throws {
        let folder = Self.corpus + "/" + target
        let inputs = try FileManager.default.contentsOfDirectory(atPath: folder).count
        #expect(inputs > 0)
        let output = try HelperProcess.run(HelperProcess.product("latchkey-fuzz"), [target, folder])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == "\(target): \(inputs) inputs replayed\n")
    }
}
