import Glibc
import DongneSystem

/// The terminal on standard input and output, put into the mode a line editor needs and given back as it was.
///
/// Raw input (no line buffering, no echo, no signals from Ctrl-C or Ctrl-Z: the editor handles those keys),
/// output still processed (a line feed returns the carriage), and bracketed paste on, so that pasted text is
/// marked as such.
final class RawTerminal {
    private var saved = termios()
    private var isRaw = false

    /// Switches the terminal to raw mode; false when standard input is not a terminal.
    func enter() -> Bool {
        guard tcgetattr(0, &saved) == 0 else { return false }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(0, TCSAFLUSH, &raw) == 0 else { return false }
        isRaw = true
        Self.write("\u{1B}[?2004h")
        return true
    }

    /// Gives the terminal back in the mode it was in.
    func leave() {
        guard isRaw else { return }
        Self.write("\u{1B}[?2004l")
        _ = tcsetattr(0, TCSAFLUSH, &saved)
        isRaw = false
    }

    /// The terminal's width in columns (80 when it does not say).
    static var columns: Int {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Writes all of `text` to standard output, however many calls it takes.
    static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if written < 0 {
                if [EINTR, EAGAIN].contains(SystemError.last(function: "write").code) { continue }
                return  // the terminal is gone: nothing left to show it to
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
