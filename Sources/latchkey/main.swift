// latchkey: the command-line tool, modelled on macOS `security`. See `latchkey help`.
import LatchkeyCLI
import LatchkeyPOSIX

CurrentProcess.exit(LatchkeyCommandLine.main())
