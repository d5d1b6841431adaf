// Test client "a": a separately built program for the agent's access-control tests.
import Foundation
import LatchkeyTestClient

exit(TestClient.main(Array(CommandLine.arguments.dropFirst())))
