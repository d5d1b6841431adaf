// docker-credential-latchkey: docker's credential helper on the Latchkey keychain. See `docker-credential-latchkey --help`.
import Foundation
import LatchkeyCredentialHelpers

exit(DockerCredentialHelper.main())
