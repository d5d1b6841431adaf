// git-credential-latchkey: git's credential helper on the Latchkey keychain. See `git-credential-latchkey --help`.
import Foundation
import LatchkeyCredentialHelpers

exit(GitCredentialHelper.main())
