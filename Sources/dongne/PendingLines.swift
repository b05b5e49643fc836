/// Lines written and not yet printed, at most ``limit`` of them: a reader who stops reading (standard output
/// piped to a process that stalls, a terminal on hold) costs a bounded amount of memory. Lines beyond the bound
/// are counted (the newest are lost, the held ones keep their order), and a line saying how many were lost is
/// printed after the held ones.
struct PendingLines<Line> {
    /// The most lines held at once: far more than any screen shows.
    static var limit: Int { 10_000 }

    private var lines: [Line] = []
    private var dropped = 0

    /// Nothing pending.
    init() {}

    /// Whether nothing waits, lost lines included.
    var isEmpty: Bool { lines.isEmpty && dropped == 0 }

    /// Holds `line`, or counts it lost when ``limit`` lines wait.
    mutating func append(_ line: Line) {
        if lines.count < Self.limit { lines.append(line) } else { dropped += 1 }
    }

    /// Everything pending, and how many lines were lost since the last time.
    mutating func take() -> (lines: [Line], dropped: Int) {
        defer { (lines, dropped) = ([], 0) }
        return (lines, dropped)
    }
}

extension ConsoleLine {
    /// Says that `count` lines were lost because the output was not being read.
    static func dropped(_ count: Int) -> ConsoleLine {
        let text = "\(count) lines were not printed: the output was not being read"
        return ConsoleLine(
            text: "* " + text, colored: Palette.dim("* " + text), event: "output-dropped", fields: ["count": count])
    }
}
