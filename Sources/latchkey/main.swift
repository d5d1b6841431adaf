// latchkey: the command-line tool, modelled on macOS `security`. See `latchkey help`.
import Foundation
import LatchkeyCLI

exit(LatchkeyCommandLine.main())
