import Foundation

/// The console of a REPL session that runs in the node for a REPL attached through the local API: each line goes
/// to that client in the one form it shows (plain, coloured, or JSON), and so does the prompt.
struct SocketConsole: Console {
    /// Which form of each line the attached REPL shows.
    enum Form: String, Sendable {
        case plain, colored, json
    }

    let client: LocalAPIClient
    let form: Form

    func write(_ line: ConsoleLine) {
        let text =
            switch form {
            case .plain: line.text
            case .colored: line.colored
            case .json: line.json
            }
        client.send(["event": "repl-line", "line": text])
    }

    func setPrompt(_ prompt: String) {
        client.send(["event": "repl-prompt", "prompt": prompt])
    }

    func flush() {}
}
