// The baseline of `latchkey-bench --peers`'s start-up table (issue 31): a statically linked Swift program that
// imports Foundation and prints a line, built by bench/peers.py with `swiftc -O -static-stdlib`. Not part of
// Latchkey.
import Foundation

if CommandLine.arguments.dropFirst().first == "--version" {
    print("foundation-program 1.0 \(Date().timeIntervalSince1970 > 0)")
}
