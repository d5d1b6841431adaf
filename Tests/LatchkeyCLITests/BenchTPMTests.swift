import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey-bench --tpm` starts its own swtpm, measures every unlock path and a P-256 signature through the
/// TPM beside one in software, prints its table and their ratio (the figures themselves are the benchmark's,
/// never a test's), and leaves no swtpm behind.
@Suite(.dedicatedThreads) struct BenchTPMTests {
    @Test func theTPMRunMeasuresEveryUnlockPath() throws {
        let output = try HelperProcess.run(HelperProcess.product("latchkey-bench"), ["--tpm", "--samples", "2"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "TPM (swtpm, socket TCTI, on this machine): median of 2 runs each (`latchkey-bench --tpm --samples 2`)"
        )
        let names = lines.filter { $0.hasPrefix("| ") && !$0.hasPrefix("| operation") }.map {
            $0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces)
        }
        #expect(
            names == [
                "unlock, passphrase only (Argon2id, 64 MiB, 3 passes) = one offline guess before enrolling",
                "unlock, passphrase entangled with the TPM (Argon2id + TPM unseal)",
                "the TPM's part: connect, primary (ECC P-256), salted session, close",
                "unlock unattended (PCR 7 policy, no passphrase)",
                "open an enrolled keychain (the device key unsealed by the TPM)",
                "P-256 sign (ECDSA, SHA-256), key held in software (in memory)",
                "P-256 sign (ECDSA, SHA-256), key made inside the TPM (connect, load, sign, flush)",
            ])
        #expect(
            lines.contains {
                $0.range(
                    of:
                        #"^A P-256 signature by a key made inside the TPM takes [0-9]+× one by a key held in software \(TPM ÷ software, medians of the same run\)\.$"#,
                    options: .regularExpression) != nil
            }, "\(lines)")
        #expect(
            lines.last == "TPM counts: 3 failures lock it out, one is forgiven every 1000 s (this swtpm's settings).")
    }
}
