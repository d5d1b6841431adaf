/// Messages on standard error (the agent's, the tool's last word), without Foundation's `FileHandle`: latchkeyd and
/// latchkey link FoundationEssentials alone (docs/DESIGN-NOTES.md, "A cold D-Bus activation").
package enum StandardError {
    /// Writes `text` whole to descriptor 2.
    package static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            // A closed or broken standard error has nowhere to report its own failure: the message is dropped.
            _ = try? FileDescriptor.standardError.writeAll(UnsafeRawBufferPointer(bytes))
        }
    }
}
