import DongneNet
import DongneSystem
import Foundation
import Glibc
import Synchronization

/// The REPL attached to a node that already runs on this data directory (`dongne node`, or another REPL): the
/// session runs in the node (`repl.attach`), with a view of its own; this process reads the lines, draws the
/// terminal and prints what the session says. `/quit` ends this REPL only; the node goes on.
enum AttachedREPL {
    static func run(path: String, options: CommandLineOptions, interactive: Bool, colors: Bool) async -> Never {
        let link: REPLLink
        do { link = try REPLLink(path: path) } catch { fail("\(error)", status: 3) }
        let terminal = interactive
            ? TerminalConsole(colors: colors) { line, word in link.completions(line: line, word: word) } : nil
        let console: any Console = terminal ?? StreamConsole(json: options.json)
        link.start(
            onLine: { console.write(ConsoleLine(madeElsewhere: $0, colored: nil, json: options.json ? $0 : nil)) },
            onPrompt: { console.setPrompt($0) },
            onHangUp: {
                console.write(.notice("the node stopped: this REPL is no longer attached"))
                terminal?.finish()
                console.flush()
                exit(0)
            })
        let form = options.json ? "json" : (colors ? "colored" : "plain")
        var attach: [String: String] = ["op": "repl.attach", "form": form]
        attach["channel"] = options.channel
        if let refusal = await link.ask(attach).refusal { fail("cannot attach: \(refusal)", status: 1) }
        for await line in terminal?.lines() ?? PipedInput.lines() {
            let answer = await link.ask(["op": "repl.line", "line": line])
            if answer.detached || answer.hungUp { break }
        }
        terminal?.finish()
        console.flush()
        exit(0)
    }
}

/// This process's end of an attached REPL: requests out, and a reader thread (`dongne-attach`) that prints the
/// session's lines as they come and hands each answer to its request.
final class REPLLink: Sendable {
    /// What an answer says to the loop that typed.
    struct Answer: Sendable {
        var refusal: String?
        var detached = false
        var hungUp = false
    }

    private struct State {
        var nextID = 1
        var waiting: [Int: @Sendable (Answer, [String]) -> Void] = [:]
        var hungUp = false
    }

    private let descriptor: Int32
    private let state = Mutex(State())

    init(path: String) throws {
        guard let descriptor = LocalListener.dial(path) else {
            throw LocalAPIConnection.Unreachable(description: "the node at \(path) stopped answering")
        }
        self.descriptor = descriptor
    }

    /// Starts reading: the session's lines to `onLine`, its prompt to `onPrompt`; `onHangUp` when the node hangs
    /// up (it stopped), after every waiting request ended.
    func start(
        onLine: @escaping @Sendable (String) -> Void, onPrompt: @escaping @Sendable (String) -> Void,
        onHangUp: @escaping @Sendable () -> Void
    ) {
        Thread.detachNewThread { [self] in
            nameThisThread("dongne-attach")
            var buffered: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                if count <= 0 { return hangUp(onHangUp) }
                buffered += chunk.prefix(count)
                while let end = buffered.firstIndex(of: 0x0A) {
                    let line = Array(buffered[..<end])
                    buffered.removeSubrange(...end)
                    dispatch(line, onLine: onLine, onPrompt: onPrompt)
                }
            }
        }
    }

    /// Sends `request` and waits for its answer.
    func ask(_ request: [String: String]) async -> Answer {
        await withCheckedContinuation { continuation in
            send(request) { answer, _ in continuation.resume(returning: answer) }
        }
    }

    /// What Tab completes with: asked of the session, waited for at most a second (the terminal's thread waits).
    func completions(line: String, word: String) -> [String] {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<[String]>([])
        send(["op": "repl.complete", "line": line, "word": word]) { _, completions in
            result.withLock { $0 = completions }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 1)
        return result.withLock { $0 }
    }

    private func send(_ request: [String: String], then: @escaping @Sendable (Answer, [String]) -> Void) {
        let id = state.withLock { state -> Int? in
            guard !state.hungUp else { return nil }
            defer { state.nextID += 1 }
            state.waiting[state.nextID] = then
            return state.nextID
        }
        guard let id else { return then(Answer(hungUp: true), []) }
        var object: [String: Any] = request
        object["id"] = id
        let line = LocalAPIJSON.line(object)
        _ = line.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private func dispatch(
        _ line: [UInt8], onLine: @Sendable (String) -> Void, onPrompt: @Sendable (String) -> Void
    ) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else { return }
        switch object["event"] as? String {
        case "repl-line": return onLine(object["line"] as? String ?? "")
        case "repl-prompt": return onPrompt(object["prompt"] as? String ?? "")
        default: break
        }
        guard let id = object["id"] as? Int, let then = state.withLock({ $0.waiting.removeValue(forKey: id) }) else {
            return
        }
        let error = (object["error"] as? [String: Any])?["message"] as? String
        then(
            Answer(refusal: error, detached: object["detached"] as? Bool ?? false),
            object["completions"] as? [String] ?? [])
    }

    /// The node hung up: every waiting request ends, and the user is told once.
    private func hangUp(_ onHangUp: @Sendable () -> Void) {
        let waiting = state.withLock { state in
            state.hungUp = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for then in waiting { then(Answer(hungUp: true), []) }
        onHangUp()
    }
}
