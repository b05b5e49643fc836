import CChafa
import CVips

/// A photo drawn in a terminal with libchafa: Unicode blocks in truecolor everywhere (tmux included), sixels or
/// the kitty graphics protocol where the terminal speaks them.
public enum TerminalPicture {
    /// How the picture is drawn.
    public enum Mode: Int32, Sendable {
        /// Unicode block symbols with truecolor: every terminal.
        case symbols = 0
        /// Sixel graphics.
        case sixels = 1
        /// The kitty graphics protocol.
        case kitty = 2

        /// What the terminal described by `environment` can show: kitty's protocol in kitty, sixels where the
        /// terminal says so, symbols everywhere else and always inside tmux (which passes neither on by default).
        public static func best(for environment: [String: String]) -> Mode {
            if environment["TMUX"] != nil { return .symbols }
            if environment["KITTY_WINDOW_ID"] != nil || environment["TERM"] == "xterm-kitty" { return .kitty }
            if let term = environment["TERM"], term.contains("sixel") || term == "mlterm" || term == "foot" {
                return .sixels
            }
            return .symbols
        }
    }

    /// The photo at `path` (or the encoded image `encoded`) in at most `columns` × `rows` cells: the text to
    /// print, lines separated by newlines; in truecolor, or as shapes alone when `colors` is false (symbols
    /// only). Throws ``PhotoError`` when the image cannot be read.
    public static func draw(
        path: String? = nil, encoded: [UInt8] = [], columns: Int, rows: Int, mode: Mode = .symbols,
        colors: Bool = true
    ) throws(PhotoError) -> String {
        guard Vips.start() else { throw .imageFailed(path: path ?? "thumbnail", reason: "libvips did not start") }
        // Symbols cover a cell with 8×8 pixels of detail at most; sixels and kitty get real pixels.
        let scale = mode == .symbols ? 8 : 16
        var pixels: UnsafeMutableRawPointer?
        var (width, height): (Int32, Int32) = (0, 0)
        let result = encoded.withUnsafeBytes { buffer in
            dongne_vips_rgba(
                path, buffer.baseAddress, buffer.count, Int32(columns * scale), Int32(rows * scale * 2), &pixels,
                &width, &height)
        }
        guard result == 0, let pixels else { throw .imageFailed(path: path ?? "thumbnail", reason: Vips.takeError()) }
        defer { dongne_vips_free(pixels) }
        guard let text = dongne_chafa_draw(
            pixels.assumingMemoryBound(to: UInt8.self), width, height, Int32(columns), Int32(rows), mode.rawValue,
            colors || mode != .symbols ? 1 : 0)
        else { throw .imageFailed(path: path ?? "thumbnail", reason: "libchafa drew nothing") }
        defer { dongne_chafa_free(text) }
        return String(cString: text)
    }
}
