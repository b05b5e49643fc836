import Testing

@testable import dongne

/// The REPL's output waits in a bounded queue: a flood of junk connections once wrote 70,000 lines in 15 s, and
/// with standard output not read the queue took the node to 480 MB.
@Suite struct PendingLinesTests {
    @Test func linesBeyondTheLimitAreCountedNotHeldAndTheCountGoesOutWithTheNextLines() {
        var pending = PendingLines<Int>()
        for line in 0..<(PendingLines<Int>.limit + 2_500) { pending.append(line) }
        let (lines, dropped) = pending.take()
        #expect(lines == Array(0..<PendingLines<Int>.limit), "the first lines, in order")
        #expect(dropped == 2_500)
        #expect(pending.isEmpty)
        pending.append(7)
        #expect(pending.take() == ([7], 0))
    }

    @Test func theLostLinesAreSaidInEveryForm() {
        let line = ConsoleLine.dropped(2_500)
        #expect(line.text == "* 2500 lines were not printed: the output was not being read")
        #expect(line.json == #"{"count":2500,"event":"output-dropped"}"#)
    }
}
