/// The rules every text field follows, in one place so that signing and decoding apply the same ones.
enum TextRules {
    /// Checks `text` against its field's limits.
    ///
    /// - Parameters:
    ///   - limit: the largest size in UTF-8 bytes.
    ///   - requiresContent: the text must hold something other than white space.
    ///   - allowsLineBreaks: line feed and tab may appear (message text); other control characters never may,
    ///     since they can rewrite what a terminal shows.
    static func check(
        _ text: String, field: String, limit: Int, requiresContent: Bool = true, allowsLineBreaks: Bool = false
    ) throws(DocumentError) {
        let size = text.utf8.count
        guard size <= limit else { throw .textTooLong(field: field, bytes: size, limit: limit) }
        var hasContent = false
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                let allowed = allowsLineBreaks && (scalar == "\n" || scalar == "\t")
                guard allowed else { throw .controlCharacter(field: field) }
            }
            // Looking up a Unicode property is the slow part: stop once one non-space scalar was found.
            if !hasContent && !scalar.properties.isWhitespace { hasContent = true }
        }
        guard hasContent || !requiresContent else { throw .emptyText(field: field) }
    }

    /// Unicode general category Cc: C0 controls, DEL and C1 controls.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }
}
