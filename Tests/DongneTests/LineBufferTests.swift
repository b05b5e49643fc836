import DongneNet
import Testing

/// The line splitter of line-based input (the local API's requests, gpsd's reports): whole lines out without
/// their `\n`, the rest kept for the next bytes, however the bytes are cut.
@Suite struct LineBufferTests {
    @Test func oneWholeLineComesOutAlone() {
        var buffer = LineBuffer()
        #expect(buffer.lines(adding: Array("{\"op\":\"status\"}\n".utf8)) == [Array("{\"op\":\"status\"}".utf8)])
        #expect(buffer.partial.isEmpty)
    }

    @Test func aLineCutAnywhereComesOutWholeOnceItsEndArrives() {
        let text = Array("첫 줄\n둘째 줄\n\n셋째".utf8)
        for cut in 0...text.count {
            var buffer = LineBuffer()
            let lines = buffer.lines(adding: Array(text[..<cut])) + buffer.lines(adding: Array(text[cut...]))
            #expect(lines == [Array("첫 줄".utf8), Array("둘째 줄".utf8), []], "cut at \(cut)")
            #expect(buffer.partial == Array("셋째".utf8))
        }
    }

    @Test func bytesWithoutAnEndWaitAndAnEndAloneFinishesThem() {
        var buffer = LineBuffer()
        #expect(buffer.lines(adding: Array("half".utf8)).isEmpty)
        #expect(buffer.lines(adding: [0x0A]) == [Array("half".utf8)])
        #expect(buffer.lines(adding: [0x0A]) == [[]])
    }
}
