import LatchkeyCaller
import Testing

/// The identities a Secret Service caller's sandbox or LSM attests, as the gate reads them (`SandboxIdentity`).
@Suite struct SandboxIdentityTests {
    /// Flatpak's rule (xdg-desktop-portal checks the same): three or more elements of ASCII letters, digits
    /// and `_`, `-` only in the last, none starting with a digit, at most 255 bytes.
    @Test func flatpakAppIDsFollowFlatpaksRule() {
        for valid in ["org.example.App", "org.example.my-app", "com.example_1.App2", "a.b.c"] {
            #expect(SandboxIdentity.isValidAppID(valid), "\(valid)")
        }
        for invalid in [
            "org.example", "org..App", ".org.example.App", "org.example.App.", "org.1example.App", "org.ex-ample.App",
            "org.example.Äpp", "", String(repeating: "a.", count: 128) + "b",
        ] {
            #expect(!SandboxIdentity.isValidAppID(invalid), "\(invalid)")
        }
    }

    /// An AppArmor profile confines only in enforce mode; `unconfined` and complain mode attest nothing; an
    /// SELinux context attests its type unless the type is unconfined.
    @Test func onlyAConfiningLabelIsAnIdentity() {
        func group(_ label: String?) -> String? { SandboxIdentity.confiningLabel(label.map { Array($0.utf8) }) }
        #expect(group("snap.firefox.firefox (enforce)") == "apparmor:snap.firefox.firefox")
        #expect(group("snap.firefox.firefox (complain)") == nil)
        #expect(group("unconfined") == nil)
        #expect(group("unconfined (enforce)") == nil)
        #expect(group("system_u:system_r:sandbox_t:s0:c1,c2") == "selinux:sandbox_t")
        #expect(group("unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023") == nil)
        #expect(group("") == nil)
        #expect(group(nil) == nil)
        #expect(SandboxIdentity.confiningLabel([0xFF, 0xFE]) == nil)
    }
}
